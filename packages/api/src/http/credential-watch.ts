import type { FastifyRequest } from 'fastify';

/**
 * How often a response that outlives its request's check asks whether the credential still holds:
 * with the key cache's 500 ms, a revoked key or an ended session stops it within the spec's second.
 */
export const CREDENTIAL_CHECK_MS = 500;

/**
 * Calls `onInvalid` once when the request's key is revoked or expires, its user is disabled, or its
 * console session ends, while its response is still being worked on (an event stream, a blocking
 * run, an MCP tool call). Returns the function that stops watching.
 */
export function watchCredential(request: FastifyRequest, onInvalid: () => void): () => void {
  const stillAuthorized = request.stillAuthorized;
  // Routes outside the authenticated scope have no credential to lose.
  if (typeof stillAuthorized !== 'function') return () => undefined;
  let checking = false;
  let stopped = false;
  const timer = setInterval(() => {
    if (checking || stopped) return;
    checking = true;
    void stillAuthorized()
      .then((valid) => {
        if (valid || stopped) return;
        stop();
        onInvalid();
      })
      .finally(() => (checking = false));
  }, CREDENTIAL_CHECK_MS);
  timer.unref();
  const stop = (): void => {
    stopped = true;
    clearInterval(timer);
  };
  return stop;
}
