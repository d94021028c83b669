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
