import { ModelError } from './errors.js';

/**
 * The fetch of model calls: it never follows a redirect. A model request carries the run's prompt
 * and whatever code the agent read, which go to LLM_BASE_URL and nowhere else; a 307 or 308 would
 * send them again to wherever it points.
 */
export function runtimeFetch(baseUrl: string): typeof fetch {
  return async (input, init) => {
    // Node's fetch hands a redirect over as it came (status and Location) when told `manual`.
    const response = await fetch(input, { ...init, redirect: 'manual' });
    if (response.status < 300 || response.status > 399) return response;
    await response.body?.cancel().catch(() => undefined);
    throw new ModelError('http', `The model runtime at ${baseUrl} answered with a redirect, which model calls do not follow: set LLM_BASE_URL to the address that serves the model`, {
      status: response.status,
    });
  };
}
