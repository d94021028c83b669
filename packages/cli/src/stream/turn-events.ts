import { StreamFrame } from '@mada/protocol';

/** An `error` frame without any text: malformed, but the run still ended, so the client stops. */
const WITHOUT_MESSAGE = 'the service reported an error without a message';

/**
 * The frame as one of the protocol's events, or undefined for a frame the client does not know
 * (an unknown kind, or a known kind missing its fields), which the protocol says to skip. An
 * `error` frame always ends the stream, even when its text is missing.
 */
export function toStreamFrame(frame: Record<string, unknown>): StreamFrame | undefined {
  const parsed = StreamFrame.safeParse(frame);
  if (parsed.success) return parsed.data;
  return frame.event === 'error' ? { event: 'error', error_message: WITHOUT_MESSAGE } : undefined;
}

/** The text of an error frame in either of its forms. */
export const errorText = (frame: Extract<StreamFrame, { event: 'error' }>): string =>
  'error_message' in frame ? frame.error_message : frame.data;
