/**
 * Retry with exponential backoff (docs/api.md, "Agents and tools"): `max_attempts` counts calls, only transient
 * network failures and the statuses 429/500/502/503/504 are retried, the delay before retry n is
 * min(base x 2^n, max), optionally jittered by a factor in [0.75, 1.25], and the last error is
 * re-raised once attempts run out.
 */

/** An HTTP answer that the caller treats as a failure; its status decides whether to retry. */
export class HttpStatusError extends Error {
  constructor(
    readonly status: number,
    message = `HTTP ${status}`,
  ) {
    super(message);
    this.name = 'HttpStatusError';
  }
}

export const RETRYABLE_STATUSES: ReadonlySet<number> = new Set([429, 500, 502, 503, 504]);

/** Node's codes for a connection that failed or timed out below HTTP. */
const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EAI_AGAIN',
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_BODY_TIMEOUT',
  'UND_ERR_SOCKET',
  'UND_ERR_CLOSED',
]);

function codeOf(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
}

/** Timeouts, refused or dropped connections (fetch wraps them in a TypeError with a cause). */
export function isRetryable(error: unknown): boolean {
  // Walks the cause chain; the visited set stops on chains that loop (a.cause = b, b.cause = a).
  const seen = new Set<unknown>();
  for (let current = error; current instanceof Error && !seen.has(current); current = current.cause) {
    seen.add(current);
    if (current instanceof HttpStatusError) return RETRYABLE_STATUSES.has(current.status);
    if (current.name === 'TimeoutError') return true;
    const code = codeOf(current);
    if (code !== undefined && NETWORK_CODES.has(code)) return true;
    if (current instanceof TypeError && current.message === 'fetch failed') return true;
  }
  return false;
}

export interface RetryOptions {
  /** Total calls, at least 1. */
  maxAttempts?: number;
  /** Seconds. */
  baseDelay?: number;
  /** Seconds. */
  maxDelay?: number;
  jitter?: boolean;
  /** Stops waiting and retrying: the abort reason is thrown. */
  signal?: AbortSignal;
  shouldRetry?: (error: unknown) => boolean;
  onRetry?: (error: unknown, attempt: number, delayMs: number) => void;
  random?: () => number;
}

/** Delay in milliseconds before retry `n` (0-based). */
export function backoffDelay(n: number, baseDelay: number, maxDelay: number, jitter: boolean, random = Math.random): number {
  const delay = Math.min(baseDelay * 2 ** n, maxDelay);
  return (jitter ? delay * (0.75 + random() * 0.5) : delay) * 1000;
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

export async function retryAsync<T>(fn: (attempt: number) => Promise<T>, options: RetryOptions = {}): Promise<T> {
  const { maxAttempts = 3, baseDelay = 1, maxDelay = 30, jitter = true, signal, shouldRetry = isRetryable } = options;
  for (let attempt = 0; ; attempt++) {
    try {
      return await fn(attempt);
    } catch (error) {
      if (attempt + 1 >= maxAttempts || !shouldRetry(error) || signal?.aborted) throw error;
      const delay = backoffDelay(attempt, baseDelay, maxDelay, jitter, options.random);
      options.onRetry?.(error, attempt + 1, delay);
      await sleep(delay, signal);
    }
  }
}

/** The decorator form: wraps `fn` so every call is retried with `options`. */
export function withRetry<A extends unknown[], T>(fn: (...args: A) => Promise<T>, options: RetryOptions = {}): (...args: A) => Promise<T> {
  return (...args: A) => retryAsync(() => fn(...args), options);
}
