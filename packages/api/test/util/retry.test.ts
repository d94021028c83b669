import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { backoffDelay, HttpStatusError, isRetryable, retryAsync, withRetry, type RetryOptions } from '../../src/util/retry.js';

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

const connectionReset = (): Error => Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' });

/** A function failing with `errors` in turn, then returning 'ok'; it counts its calls. */
function flaky(...errors: unknown[]) {
  const fn = vi.fn(async (attempt: number) => {
    if (attempt < errors.length) throw errors[attempt];
    return 'ok';
  });
  return fn;
}

/** Starts a retry and settles it, running every timer; the outcome never rejects unhandled. */
async function settle<T>(promise: Promise<T>): Promise<{ value?: T; error?: unknown }> {
  const outcome = promise.then(
    (value) => ({ value }),
    (error: unknown) => ({ error }),
  );
  await vi.runAllTimersAsync();
  return outcome;
}

const noJitter: RetryOptions = { jitter: false };

describe('retryAsync', () => {
  it('counts max_attempts as the total number of calls', async () => {
    const fn = flaky(connectionReset(), connectionReset(), connectionReset(), connectionReset());
    const { error } = await settle(retryAsync(fn, { ...noJitter, maxAttempts: 3 }));
    expect(fn).toHaveBeenCalledTimes(3);
    expect(error).toBeInstanceOf(Error);
  });

  it('calls once with max_attempts 1', async () => {
    const fn = flaky(connectionReset());
    await settle(retryAsync(fn, { maxAttempts: 1 }));
    expect(fn).toHaveBeenCalledTimes(1);
  });

  it('returns the first success', async () => {
    const fn = flaky(connectionReset());
    expect(await settle(retryAsync(fn, noJitter))).toEqual({ value: 'ok' });
    expect(fn).toHaveBeenCalledTimes(2);
  });

  it('defaults to 3 attempts', async () => {
    const fn = flaky(...Array.from({ length: 5 }, connectionReset));
    await settle(retryAsync(fn, noJitter));
    expect(fn).toHaveBeenCalledTimes(3);
  });

  it('raises the last error once attempts run out', async () => {
    const last = new HttpStatusError(503, 'third');
    const fn = flaky(new HttpStatusError(500, 'first'), new HttpStatusError(502, 'second'), last);
    expect((await settle(retryAsync(fn, noJitter))).error).toBe(last);
  });

  it('waits min(base x 2^n, max) seconds before retry n', async () => {
    const fn = flaky(...Array.from({ length: 5 }, connectionReset));
    const outcome = retryAsync(fn, { jitter: false, maxAttempts: 5, baseDelay: 1, maxDelay: 5 }).catch(() => undefined);
    const callsAfter = async (ms: number): Promise<number> => {
      await vi.advanceTimersByTimeAsync(ms);
      return fn.mock.calls.length;
    };
    expect(await callsAfter(0)).toBe(1);
    expect(await callsAfter(999)).toBe(1);
    expect(await callsAfter(1)).toBe(2); // retry 0 after 1 s
    expect(await callsAfter(1999)).toBe(2);
    expect(await callsAfter(1)).toBe(3); // retry 1 after 2 s
    expect(await callsAfter(3999)).toBe(3);
    expect(await callsAfter(1)).toBe(4); // retry 2 after 4 s
    expect(await callsAfter(4999)).toBe(4);
    expect(await callsAfter(1)).toBe(5); // retry 3 after min(8, 5) s
    await outcome;
  });

  it('reports each retry with its number and delay', async () => {
    const onRetry = vi.fn();
    await settle(retryAsync(flaky(connectionReset(), connectionReset()), { jitter: false, baseDelay: 0.5, onRetry }));
    expect(onRetry.mock.calls.map(([, attempt, delay]) => [attempt, delay])).toEqual([
      [1, 500],
      [2, 1000],
    ]);
  });

  it('jitters each delay by a factor between 0.75 and 1.25', async () => {
    const delays: number[] = [];
    const fn = flaky(...Array.from({ length: 200 }, connectionReset));
    await settle(retryAsync(fn, { maxAttempts: 200, baseDelay: 1, maxDelay: 1, onRetry: (_e, _a, delay) => delays.push(delay) }));
    expect(delays).toHaveLength(199);
    expect(Math.min(...delays)).toBeGreaterThanOrEqual(750);
    expect(Math.max(...delays)).toBeLessThanOrEqual(1250);
    expect(new Set(delays).size).toBeGreaterThan(1);
  });

  it.each([
    new TypeError("Cannot read properties of undefined (reading 'x')"),
    new Error('boom'),
    new RangeError('out of range'),
    new HttpStatusError(400),
    new HttpStatusError(401),
    new HttpStatusError(404),
    'a thrown string',
  ])('raises %s at once, without retrying', async (thrown) => {
    const fn = flaky(thrown);
    const { error } = await settle(retryAsync(fn, noJitter));
    expect(error).toBe(thrown);
    expect(fn).toHaveBeenCalledTimes(1);
  });

  it.each([429, 500, 502, 503, 504])('retries HTTP %d', async (status) => {
    const fn = flaky(new HttpStatusError(status));
    expect(await settle(retryAsync(fn, noJitter))).toEqual({ value: 'ok' });
    expect(fn).toHaveBeenCalledTimes(2);
  });

  it('retries with a custom shouldRetry', async () => {
    const fn = flaky(new Error('custom'));
    await settle(retryAsync(fn, { ...noJitter, shouldRetry: () => true }));
    expect(fn).toHaveBeenCalledTimes(2);
  });

  it('stops waiting when the signal aborts, raising the abort reason', async () => {
    const controller = new AbortController();
    const fn = flaky(connectionReset(), connectionReset());
    const outcome = retryAsync(fn, { jitter: false, baseDelay: 10, signal: controller.signal }).catch((error: unknown) => error);
    await vi.advanceTimersByTimeAsync(1000);
    controller.abort(new Error('cancelled'));
    expect(((await outcome) as Error).message).toBe('cancelled');
    await vi.advanceTimersByTimeAsync(20_000);
    expect(fn).toHaveBeenCalledTimes(1);
  });
});

describe('isRetryable', () => {
  it('accepts timeouts and connection failures', () => {
    expect(isRetryable(new DOMException('The operation timed out', 'TimeoutError'))).toBe(true);
    expect(isRetryable(Object.assign(new Error('connect'), { code: 'ECONNREFUSED' }))).toBe(true);
    expect(isRetryable(Object.assign(new Error('timeout'), { code: 'ETIMEDOUT' }))).toBe(true);
    expect(isRetryable(new TypeError('fetch failed', { cause: Object.assign(new Error('other side closed'), { code: 'UND_ERR_SOCKET' }) }))).toBe(true);
    expect(isRetryable(new Error('wrapped', { cause: connectionReset() }))).toBe(true);
  });

  it('refuses other errors and statuses such as 200, 400, 401 and 404', () => {
    for (const status of [200, 400, 401, 404]) expect(isRetryable(new HttpStatusError(status))).toBe(false);
    expect(isRetryable(new DOMException('aborted', 'AbortError'))).toBe(false);
    expect(isRetryable(new SyntaxError('Unexpected token <'))).toBe(false);
    expect(isRetryable(undefined)).toBe(false);
  });

  it('terminates on cause chains that loop', () => {
    const a = new Error('a');
    const b = new Error('b', { cause: a });
    Object.assign(a, { cause: b });
    expect(isRetryable(a)).toBe(false);
  });
});

describe('backoffDelay', () => {
  it('doubles from the base up to the maximum, in milliseconds', () => {
    expect([0, 1, 2, 3, 4, 5, 6].map((n) => backoffDelay(n, 1, 30, false))).toEqual([1000, 2000, 4000, 8000, 16000, 30000, 30000]);
  });

  it('scales by 0.75 + 0.5 x random when jittered', () => {
    expect(backoffDelay(2, 1, 30, true, () => 0)).toBe(3000);
    expect(backoffDelay(2, 1, 30, true, () => 0.5)).toBe(4000);
    expect(backoffDelay(2, 1, 30, true, () => 1)).toBe(5000);
  });
});

describe('withRetry', () => {
  it('wraps a function so each call is retried with the options', async () => {
    let calls = 0;
    const fetchUser = withRetry(
      async (id: number, name: string) => {
        calls++;
        if (calls === 1) throw new HttpStatusError(503);
        return `${id}:${name}`;
      },
      { jitter: false, baseDelay: 0.1 },
    );
    expect(await settle(fetchUser(7, 'ada'))).toEqual({ value: '7:ada' });
    expect(calls).toBe(2);
  });

  it('raises non-retryable errors of the wrapped function at once', async () => {
    const failing = vi.fn(async () => {
      throw new HttpStatusError(404);
    });
    const { error } = await settle(withRetry(failing)());
    expect(error).toBeInstanceOf(HttpStatusError);
    expect(failing).toHaveBeenCalledTimes(1);
  });
});
