import { scripted, startScriptedModel, type ScriptedModel } from '@mada/testkit';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startReplicas, type Replicas } from '../support/app.js';
import { TEST_DATABASE_URL } from '../support/databases.js';
import { deferred, quotaClient, type QuotaClient } from '../support/quota-client.js';
import { readRunEvents } from '../support/run-events.js';
import { until } from '../support/until.js';

const ROOT = 'root-key-93b0c4e7d2a1';

/** Two services on one PostgreSQL database: a user's quotas hold over both, however requests race. */
describe.skipIf(!TEST_DATABASE_URL)('user quotas across replicas on postgres', () => {
  let model: ScriptedModel;
  let replicas: Replicas;
  let a: QuotaClient;
  let b: QuotaClient;

  beforeEach(async () => {
    model = await startScriptedModel();
    replicas = await startReplicas({ API_KEYS: `root:${ROOT}`, ADMIN_USERS: 'root', RATE_LIMIT_PER_MINUTE: '0', LLM_PROVIDER: 'ollama', LLM_BASE_URL: model.url });
    a = quotaClient(replicas.addressA, ROOT);
    b = quotaClient(replicas.addressB, ROOT);
  });
  afterEach(async () => {
    await replicas.close();
    await model.close();
  });

  it('stores exactly the daily run quota of runs when ten submissions race on both replicas', async () => {
    const key = await a.user('kim', { max_runs_per_day: 3 });
    for (let i = 0; i < 10; i++) model.push(scripted.text('ok'));
    const responses = await Promise.all(Array.from({ length: 10 }, (_, i) => (i % 2 === 0 ? a : b).startRun(key)));
    const refused = responses.filter((r) => r.status === 429);
    expect(responses.filter((r) => r.status === 202)).toHaveLength(3);
    expect(refused).toHaveLength(7);
    for (const response of refused) expect(await response.json()).toEqual({ detail: 'Daily run quota reached (3)' });
    expect((await b.me(key)).usage.runs_today).toBe(3);
  });

  it('refuses on one replica a user whose run used the token quota up on the other', async () => {
    const key = await a.user('lea', { max_tokens_per_day: 1 });
    model.push(scripted.text('costly'));
    const run = await a.ended(key, await a.runId(await a.startRun(key)));
    const usage = run.usage as { input_tokens: number; output_tokens: number };
    const detail = `Daily token quota reached (${usage.input_tokens + usage.output_tokens} of 1)`;
    expect(run).toMatchObject({ status: 'failed', error: detail });
    const refused = await b.startRun(key);
    expect([refused.status, await refused.json()]).toEqual([429, { detail }]);
  });

  it("queues a run on one replica while the user's only place is taken on the other, and starts it once that run ends", async () => {
    const key = await a.user('max', { max_concurrent_runs: 1 });
    const hold = deferred();
    model.push(scripted.chunks('busy ', scripted.until(hold.promise), 'done'), scripted.text('second'));
    const busy = await a.runId(await a.startRun(key));
    await until(() => a.run(key, busy), (r) => r.status === 'running', 'the first run to start');
    const waiting = await b.runId(await b.startRun(key));
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect((await a.run(key, waiting)).status).toBe('queued');
    expect(model.requests).toHaveLength(1);
    hold.resolve();
    const second = await b.ended(key, waiting);
    expect(second).toMatchObject({ status: 'succeeded', response: 'second' });
    // Woken by the end's notification, not by looking again 2 s later.
    const ended = Date.parse((await a.run(key, busy)).ended_at as string);
    expect(Date.parse(second.started_at as string) - ended).toBeLessThan(1000);
    const first = (await readRunEvents(b.address, waiting, { headers: b.headers(key), maxFrames: 1 })).frames[0]?.data;
    expect(first).toMatch(/^\{"event":"thinking","message":"Queued: /);
  });

  it('never executes more than max_concurrent_runs of one user at once over both replicas', async () => {
    const key = await a.user('ned', { max_concurrent_runs: 2 });
    let active = 0;
    let peak = 0;
    for (let i = 0; i < 8; i++) {
      model.push(async () => {
        active += 1;
        peak = Math.max(peak, active);
        await new Promise((resolve) => setTimeout(resolve, 150));
        active -= 1;
        return scripted.text('done');
      });
    }
    const ids = await Promise.all(Array.from({ length: 8 }, async (_, i) => {
      const replica = i % 2 === 0 ? a : b;
      return replica.runId(await replica.startRun(key));
    }));
    const ends = await Promise.all(ids.map((id) => a.ended(key, id)));
    expect(ends.every((r) => r.status === 'succeeded')).toBe(true);
    // Each replica alone would allow two (MAX_CONCURRENT_RUNS 4): four at once without the database count.
    expect(peak).toBe(2);
  });
});
