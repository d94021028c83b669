import { ChunkFrame, StreamEvent, TurnDoneFrame } from '@mada/protocol';

/** What the client does with a frame; frames it does not know become nothing. */
export type TurnEvent =
  | { kind: 'tool_start'; tool: string; args: Record<string, unknown> }
  | { kind: 'tool_done'; tool: string; summary: string }
  | { kind: 'thinking'; message: string }
  | { kind: 'text'; text: string }
  | { kind: 'error'; message: string }
  | { kind: 'done'; mode?: string; totalTokens?: number; summarized?: boolean };

export function toTurnEvent(frame: Record<string, unknown>): TurnEvent | undefined {
  const turnDone = TurnDoneFrame.safeParse(frame);
  if (turnDone.success) {
    const { mode, total_tokens, summarized } = turnDone.data;
    return { kind: 'done', mode, totalTokens: total_tokens, summarized };
  }
  const chunk = ChunkFrame.safeParse(frame);
  if (chunk.success) return { kind: 'text', text: chunk.data.data };
  // The legacy error form carries its text in `data`.
  if (frame.event === 'error') {
    const text = [frame.error_message, frame.data].find((value): value is string => typeof value === 'string');
    return { kind: 'error', message: text ?? 'the service reported an error without a message' };
  }
  const parsed = StreamEvent.safeParse(frame);
  if (!parsed.success) return undefined;
  const event = parsed.data;
  switch (event.event) {
    case 'tool_start':
      return { kind: 'tool_start', tool: event.tool ?? 'tool', args: event.args ?? {} };
    case 'tool_done':
      return { kind: 'tool_done', tool: event.tool ?? 'tool', summary: event.result_summary ?? '' };
    case 'thinking':
      return event.message ? { kind: 'thinking', message: event.message } : undefined;
    case 'response':
      return event.text ? { kind: 'text', text: event.text } : undefined;
    case 'done':
      return event.mode === undefined ? { kind: 'done' } : { kind: 'done', mode: event.mode };
    case 'error':
      return undefined;
  }
}
