import { until } from './until.js';

/** A promise and its resolve function (Promise.withResolvers needs Node 22). */
export function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve: () => void = () => undefined;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

export const ENDED = new Set(['succeeded', 'failed', 'cancelled', 'interrupted']);

interface Me {
  quotas: { max_concurrent_runs: number; max_runs_per_day: number; max_tokens_per_day: number };
  usage: { runs_today: number; tokens_today: number; running: number };
}

/** Calls one service over HTTP as an admin (`rootKey`) or as the users it makes. */
export function quotaClient(address: string, rootKey: string) {
  const headers = (key: string): Record<string, string> => ({ 'x-api-key': key, 'content-type': 'application/json' });
  const call = (key: string, method: string, path: string, body?: unknown): Promise<Response> =>
    fetch(`${address}${path}`, { method, headers: headers(key), ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
  const run = async (key: string, id: string): Promise<Record<string, unknown>> => (await (await call(key, 'GET', `/runs/${id}`)).json()) as Record<string, unknown>;
  return {
    address,
    headers,
    call,
    run,
    /** A stored user with these quotas (those left out follow the settings) and a key of theirs. */
    async user(id: string, quotas: Record<string, number | null>): Promise<string> {
      const created = await call(rootKey, 'POST', '/users', { id, quotas });
      if (created.status !== 201) throw new Error(`user ${id}: ${created.status} ${await created.text()}`);
      return ((await (await call(rootKey, 'POST', `/users/${id}/keys`, { name: 'test' })).json()) as { key: string }).key;
    },
    me: async (key: string): Promise<Me> => (await (await call(key, 'GET', '/me')).json()) as Me,
    startRun: (key: string, agentType = 'plan'): Promise<Response> => call(key, 'POST', '/runs', { agent_type: agentType, prompt: 'go' }),
    async runId(response: Response): Promise<string> {
      if (response.status !== 202) throw new Error(`run not started: ${response.status} ${await response.text()}`);
      return ((await response.json()) as { id: string }).id;
    },
    ended: (key: string, id: string) => until(() => run(key, id), (r) => ENDED.has(r.status as string), `run ${id} to end`),
  };
}

export type QuotaClient = ReturnType<typeof quotaClient>;
