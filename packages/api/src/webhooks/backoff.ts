/** Deliveries are retried for this long after the event, then given up. */
export const RETRY_WINDOW_MS = 24 * 3_600_000;
/** No wait between two attempts is longer than this. */
const MAX_DELAY_MS = 3_600_000;

/**
 * When to try again after `attempts` failed attempts: the base delay, doubled after each attempt,
 * at most an hour; null once that falls after the 24 h window that began at `createdAt`.
 */
export function nextAttempt(createdAt: Date, attempts: number, now: Date, baseMs: number): Date | null {
  const delay = Math.min(MAX_DELAY_MS, baseMs * 2 ** Math.min(30, Math.max(0, attempts - 1)));
  const at = new Date(now.getTime() + delay);
  return at.getTime() > createdAt.getTime() + RETRY_WINDOW_MS ? null : at;
}
