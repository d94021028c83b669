import type { AgentEvent, ChunkEvent, ResponseEvent } from '@mada/protocol';

/** A plain text frame: `response` text or legacy `chunk` data, nothing else in it. */
type TextFrame = ResponseEvent | ChunkEvent;

/**
 * Two text frames in a row as one (`response` text or legacy `chunk` data), or undefined when they
 * are not both plain text frames of the same kind. Clients concatenate text frames, so the merged
 * frame reads the same, and it is one stored event instead of two.
 */
export function mergeTextFrames(first: AgentEvent, second: AgentEvent): TextFrame | undefined {
  if (!isTextFrame(first) || !isTextFrame(second)) return undefined;
  if (first.event === 'response' && second.event === 'response') return { event: 'response', text: `${first.text}${second.text}` };
  if (first.event === 'chunk' && second.event === 'chunk') return { event: 'chunk', data: `${first.data}${second.data}` };
  return undefined;
}

/** A plain text frame: one a later text frame may join. */
export function isTextFrame(frame: AgentEvent): frame is TextFrame {
  const field = frame.event === 'response' ? 'text' : frame.event === 'chunk' ? 'data' : undefined;
  // A frame built with more than its text (never by this service today) is stored as it is.
  return field !== undefined && Object.keys(frame).every((key) => key === 'event' || key === field);
}
