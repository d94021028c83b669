import { scripted, startScriptedModel, type ScriptedModel } from '@mada/testkit';
import { afterEach, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../support/app.js';
import { TEST_DATABASE_URL } from '../support/databases.js';
import { until } from '../support/until.js';

const env = { API_KEYS: 'ann:ann-key-0123456789', RATE_LIMIT_PER_MINUTE: '0', MAX_CONCURRENT_RUNS: '1', MAX_QUEUED_RUNS_PER_USER: '2' };
const headers = { 'x-api-key': 'ann-key-0123456789', 'content-type': 'application/json' };

describe.skipIf(!TEST_DATABASE_URL)('MAX_QUEUED_RUNS_PER_USER with two replicas on one PostgreSQL database', () => {
  let model: ScriptedModel | undefined;
  const apps: TestApp[] = [];
  let release: () => void = () => undefined;
  afterEach(async () => {
    release();
    for (const app of apps.splice(0).reverse()) await app.close();
    await model?.close();
  });

  it("counts the user's queued runs on every replica, however the requests race", async () => {
    model = await startScriptedModel();
    const a = await createTestApp({ dialect: 'postgres', env, model: { url: model.url } });
    apps.push(a);
    const b = await createTestApp({ env, model: { url: model.url }, shareDatabaseOf: a });
    apps.push(b);
    const released = new Promise<void>((resolve) => (release = resolve));
    const bases = [await a.app.listen({ port: 0, host: '127.0.0.1' }), await b.app.listen({ port: 0, host: '127.0.0.1' })];
    const start = (base: string) => fetch(`${base}/runs`, { method: 'POST', headers, body: JSON.stringify({ agent_type: 'plan', prompt: 'wait' }) });
    // Each replica's one place is taken by a run that waits.
    for (const base of bases) {
      model.push(scripted.chunks('busy ', scripted.until(released), 'done'));
      const { id } = (await (await start(base)).json()) as { id: string };
      await until(async () => ((await (await fetch(`${base}/runs/${id}`, { headers })).json()) as { status: string }).status, (s) => s === 'running', 'the run to start');
    }
    const statuses = await Promise.all(Array.from({ length: 8 }, (_, i) => start(bases[i % 2]!).then((response) => response.status)));
    expect(statuses.filter((status) => status === 202)).toHaveLength(2);
    expect(statuses.filter((status) => status === 429)).toHaveLength(6);
    const queued = (await (await fetch(`${bases[0]}/runs?status=queued`, { headers })).json()) as { total: number };
    expect(queued.total).toBe(2);
  });
});
