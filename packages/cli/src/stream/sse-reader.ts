import { createParser } from 'eventsource-parser';

/** One Server-Sent Event: its `data` and, when the server named it, its `id`. */
export interface SseEvent {
  id: string | undefined;
  data: string;
}

/**
 * Each Server-Sent Event, in order. A last event the server did not finish with a blank line
 * still counts: the connection closing ends it.
 */
export async function* readSseEvents(chunks: AsyncIterable<Uint8Array>): AsyncGenerator<SseEvent> {
  const decoder = new TextDecoder();
  const pending: SseEvent[] = [];
  const parser = createParser({ onEvent: (event) => pending.push({ id: event.id, data: event.data }) });
  for await (const chunk of chunks) {
    parser.feed(decoder.decode(chunk, { stream: true }));
    yield* pending.splice(0);
  }
  parser.feed(`${decoder.decode()}\n\n`);
  yield* pending.splice(0);
}

/** The `data` of each Server-Sent Event, in order. */
export async function* readSseData(chunks: AsyncIterable<Uint8Array>): AsyncGenerator<string> {
  for await (const event of readSseEvents(chunks)) yield event.data;
}

/** The data as a JSON object, or undefined for anything else (skipped, as the protocol asks). */
export function jsonObject(data: string): Record<string, unknown> | undefined {
  let value: unknown;
  try {
    value = JSON.parse(data);
  } catch {
    return undefined;
  }
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
}

/** JSON objects from `data:` lines; anything that is not a JSON object is skipped. */
export async function* readJsonFrames(chunks: AsyncIterable<Uint8Array>): AsyncGenerator<Record<string, unknown>> {
  for await (const data of readSseData(chunks)) {
    const frame = jsonObject(data);
    if (frame) yield frame;
  }
}

/** A stored run's event: its number in the run (when the server sent one) and its JSON. */
export interface RunFrame {
  id: number | undefined;
  frame: Record<string, unknown>;
}

/** The JSON frames of a run's event stream with their `id:` numbers. */
export async function* readRunFrames(chunks: AsyncIterable<Uint8Array>): AsyncGenerator<RunFrame> {
  for await (const event of readSseEvents(chunks)) {
    const frame = jsonObject(event.data);
    if (!frame) continue;
    const id = event.id !== undefined && /^\d+$/.test(event.id) ? Number(event.id) : undefined;
    yield { id, frame };
  }
}
