import type { ScriptedModel } from '@mada/testkit';
import { expect } from 'vitest';

/**
 * Runs `request` against the service at `serviceUrl` while asking GET /health every 100 ms from
 * the moment the model is asked until the run answers: the statuses of those checks, each given
 * a generous 15 s to answer at all. A service whose event loop is held longer fails a check.
 */
export async function withHealthChecks(
  serviceUrl: string,
  model: ScriptedModel,
  request: () => Promise<Response>,
): Promise<{ response: Response; body: string; health: number[] }> {
  const asked = model.requests.length;
  let finished = false;
  const run = request().then(async (response) => ({ response, body: await response.text() }));
  void run.finally(() => (finished = true));
  const health: number[] = [];
  await expect.poll(() => model.requests.length > asked || finished, { timeout: 30_000 }).toBe(true);
  do {
    const response = await fetch(`${serviceUrl}/health`, { signal: AbortSignal.timeout(15_000) });
    await response.arrayBuffer();
    health.push(response.status);
    await new Promise((resolve) => setTimeout(resolve, 100));
  } while (!finished);
  return { ...(await run), health };
}
