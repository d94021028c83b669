import { errorText, toStreamFrame } from '../stream/turn-events.js';
import type { TurnProgress } from '../ui/progress.js';

/** How a turn's event stream ended. */
export type StreamEnd =
  | { end: 'done'; answer: string; totalTokens?: number | undefined; summarized?: boolean | undefined }
  | { end: 'error'; answer: string; message: string }
  | { end: 'closed'; answer: string };

/** What a handler of an event the loop does not show by itself gets. */
export interface TurnEvent {
  frame: Record<string, unknown>;
  /** The stored run the event belongs to; undefined on the legacy streams. */
  runId: string | undefined;
  progress: TurnProgress;
}

/**
 * Hooks for events that need more than a progress line. The loop waits for a handler before it
 * reads the next frame, so a handler may ask the user something (the approval prompt does).
 */
export interface TurnEventHandlers {
  approvalRequested?: (event: TurnEvent) => Promise<void>;
}

/** Reads frames until `done` or `error`, showing progress; leaving the loop closes the connection. */
export async function follow(
  frames: AsyncIterable<Record<string, unknown>>,
  progress: TurnProgress,
  handlers: TurnEventHandlers = {},
  runId?: string,
): Promise<StreamEnd> {
  let answer = '';
  for await (const raw of frames) {
    if (raw.event === 'approval_requested' && handlers.approvalRequested) {
      await handlers.approvalRequested({ frame: raw, runId, progress });
      continue;
    }
    const frame = toStreamFrame(raw);
    switch (frame?.event) {
      case 'tool_start':
        progress.toolStarted(frame.tool, frame.args);
        break;
      case 'tool_done':
        progress.toolDone(frame.tool, frame.result_summary, frame.outcome);
        break;
      case 'thinking':
        if (frame.message !== '') progress.thinking(frame.message);
        break;
      case 'approval_requested':
        progress.thinking(`Waiting for approval ${frame.approval_id} (mada approve / mada deny)`);
        break;
      case 'approval_resolved':
        progress.thinking(frame.decision === 'approved' ? 'Approved' : `Denied${frame.message ? `: ${frame.message}` : ''}`);
        break;
      case 'response':
        answer += frame.text;
        progress.text(frame.text);
        break;
      case 'chunk':
        answer += frame.data;
        progress.text(frame.data);
        break;
      case 'error':
        return { end: 'error', answer, message: errorText(frame) };
      case 'done':
        return 'total_tokens' in frame
          ? { end: 'done', answer, totalTokens: frame.total_tokens, summarized: frame.summarized }
          : { end: 'done', answer };
      case undefined:
        break;
    }
  }
  return { end: 'closed', answer };
}

/** The frames of a run's events without their ids. */
export async function* framesOf(events: AsyncIterable<{ frame: Record<string, unknown> }>): AsyncGenerator<Record<string, unknown>> {
  for await (const event of events) yield event.frame;
}
