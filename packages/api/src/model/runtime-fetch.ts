import { ModelError } from './errors.js';

/**
 * The fetch of model calls: it never follows a redirect. A model request carries the run's prompt
 * and whatever code the agent read, which go to LLM_BASE_URL and nowhere else; a 307 or 308 would
 * send them again to wherever it points. Refusing redirects also spares undici the copy of each
 * request's body it keeps for resending after one.
 */
export function runtimeFetch(baseUrl: string): typeof fetch {
  return async (input, init) => {
    try {
      // `window: null` with `redirect: 'error'` is what lets undici send the request itself, not a copy.
      return await fetch(input, { ...init, redirect: 'error', window: null });
    } catch (error) {
      if (!isRefusedRedirect(error)) throw error;
      throw new ModelError('http', `The model runtime at ${baseUrl} answered with a redirect, which model calls do not follow: set LLM_BASE_URL to the address that serves the model`, {
        cause: error,
      });
    }
  };
}

/** undici's refusal of a redirect under `redirect: 'error'`: a failed fetch whose cause says so. */
const isRefusedRedirect = (error: unknown): boolean => error instanceof TypeError && error.cause instanceof Error && error.cause.message === 'unexpected redirect';
