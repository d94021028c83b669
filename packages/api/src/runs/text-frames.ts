import type { RunFrame } from './run-service.js';

const TEXT_FIELD: Record<string, string> = { response: 'text', chunk: 'data' };

/**
 * Two text frames in a row as one (`response` text or legacy `chunk` data), or undefined when they
 * are not both plain text frames of the same kind. Clients concatenate text frames, so the merged
 * frame reads the same, and it is one stored event instead of two.
 */
export function mergeTextFrames(first: RunFrame, second: RunFrame): RunFrame | undefined {
  const field = TEXT_FIELD[first.event];
  if (field === undefined || first.event !== second.event || !isPlainText(first, field) || !isPlainText(second, field)) return undefined;
  return { event: first.event, [field]: `${first[field] as string}${second[field] as string}` };
}

const isPlainText = (frame: RunFrame, field: string): boolean =>
  typeof frame[field] === 'string' && Object.keys(frame).every((key) => key === 'event' || key === field);

/** A plain text frame (`response` text or legacy `chunk` data): one a later text frame may join. */
export const isTextFrame = (frame: RunFrame): boolean => {
  const field = TEXT_FIELD[frame.event];
  return field !== undefined && isPlainText(frame, field);
};
