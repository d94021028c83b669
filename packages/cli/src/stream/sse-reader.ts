import { createParser } from 'eventsource-parser';

/**
 * The `data` of each Server-Sent Event, in order. A last event the server did not finish with a
 * blank line still counts: the connection closing ends it.
 */
export async function* readSseData(chunks: AsyncIterable<Uint8Array>): AsyncGenerator<string> {
  const decoder = new TextDecoder();
  const pending: string[] = [];
  const parser = createParser({ onEvent: (event) => pending.push(event.data) });
  for await (const chunk of chunks) {
    parser.feed(decoder.decode(chunk, { stream: true }));
    yield* pending.splice(0);
  }
  parser.feed(`${decoder.decode()}\n\n`);
  yield* pending.splice(0);
}

/** JSON objects from `data:` lines; anything that is not a JSON object is skipped, as the protocol asks. */
export async function* readJsonFrames(chunks: AsyncIterable<Uint8Array>): AsyncGenerator<Record<string, unknown>> {
  for await (const data of readSseData(chunks)) {
    let value: unknown;
    try {
      value = JSON.parse(data);
    } catch {
      continue;
    }
    if (typeof value === 'object' && value !== null && !Array.isArray(value)) yield value as Record<string, unknown>;
  }
}
