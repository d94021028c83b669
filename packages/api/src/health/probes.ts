/** A dependency check for GET /health: resolves to a short status word, never throws. */
export type Probe = () => Promise<string>;

/**
 * Reachable means the server answered HTTP at all: a 404 from a proxy in front of Ollama still
 * proves the network path, while a refused connection or a timeout does not.
 */
export function httpProbe(url: string, timeoutMs = 2000, headers: Record<string, string> = {}): Probe {
  return async () => {
    try {
      const response = await fetch(url, { signal: AbortSignal.timeout(timeoutMs), headers });
      await response.body?.cancel();
      return response.status < 500 ? 'ok' : 'unreachable';
    } catch {
      return 'unreachable';
    }
  };
}

/** How long GET /health reuses a check's answer. */
export const PROBE_CACHE_MS = 2000;

/**
 * `probe`, asked at most once per `ttlMs`: callers within that time get the last answer, and
 * callers while it is being asked share that one asking. GET /health is open to anyone, and each
 * asking costs a database query and a request to each runtime: a flood of it otherwise slowed
 * every user's requests (and hit the runtimes as hard).
 */
export function cachedProbe<T>(probe: () => Promise<T>, ttlMs = PROBE_CACHE_MS, now: () => number = performance.now.bind(performance)): () => Promise<T> {
  let last: { value: Promise<T>; askedAt: number } | undefined;
  return () => {
    const time = now();
    // Measured from when the asking started: an answer that took long is not kept longer for it.
    if (last === undefined || time - last.askedAt >= ttlMs) last = { value: probe(), askedAt: time };
    return last.value;
  };
}
