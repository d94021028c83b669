/** One frame of GET /runs/{id}/events: its id and its JSON text, exactly as sent. */
export interface EventFrame {
  id: number;
  data: string;
}

/** Parses `id:`/`data:` blocks; comments (`: ping`) are skipped. */
export function parseEventFrames(text: string): EventFrame[] {
  return text
    .split('\n\n')
    .filter((block) => block.startsWith('id: '))
    .map((block) => {
      const [idLine, dataLine] = block.split('\n');
      return { id: Number(idLine!.slice('id: '.length)), data: dataLine!.slice('data: '.length) };
    });
}

export interface ReadOptions {
  lastEventId?: number;
  headers?: Record<string, string>;
  /** Stop (and drop the connection) after this many frames. */
  maxFrames?: number;
}

/**
 * Reads GET /runs/{id}/events over real HTTP until the server closes the stream, or until
 * `maxFrames` frames arrived, in which case the client drops the connection mid-run.
 */
export async function readRunEvents(address: string, runId: string, options: ReadOptions = {}): Promise<{ status: number; frames: EventFrame[]; closedByServer: boolean }> {
  const controller = new AbortController();
  const headers: Record<string, string> = { accept: 'text/event-stream', ...options.headers };
  if (options.lastEventId !== undefined) headers['last-event-id'] = String(options.lastEventId);
  const response = await fetch(`${address}/runs/${runId}/events`, { headers, signal: controller.signal });
  if (!response.ok || !response.body) return { status: response.status, frames: [], closedByServer: true };
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let text = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return { status: response.status, frames: parseEventFrames(text), closedByServer: true };
    text += decoder.decode(value, { stream: true });
    const complete = text.slice(0, text.lastIndexOf('\n\n') + 2);
    const frames = parseEventFrames(complete);
    if (options.maxFrames !== undefined && frames.length >= options.maxFrames) {
      controller.abort();
      return { status: response.status, frames: frames.slice(0, options.maxFrames), closedByServer: false };
    }
  }
}

/**
 * Follows GET /runs/{id}/events over real HTTP until the server closes the stream, calling
 * `onFrame` as each complete frame arrives (so a test can react while the run is still going).
 */
export async function followRunEventsOver(address: string, runId: string, onFrame: (frame: EventFrame) => void, headers: Record<string, string> = {}): Promise<EventFrame[]> {
  const response = await fetch(`${address}/runs/${runId}/events`, { headers: { accept: 'text/event-stream', ...headers } });
  if (!response.ok || !response.body) throw new Error(`GET /runs/${runId}/events answered ${response.status}`);
  const decoder = new TextDecoder();
  const frames: EventFrame[] = [];
  let text = '';
  for await (const chunk of response.body) {
    text += decoder.decode(chunk, { stream: true });
    const end = text.lastIndexOf('\n\n');
    if (end < 0) continue;
    for (const frame of parseEventFrames(text.slice(0, end + 2))) {
      frames.push(frame);
      onFrame(frame);
    }
    text = text.slice(end + 2);
  }
  return frames;
}
