import { scripted, startScriptedModel, type ScriptedModel } from '@mada/testkit';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../support/app.js';
import { DIALECTS } from '../support/databases.js';
import { readRunEvents } from '../support/run-events.js';
import { until } from '../support/until.js';
import { deferred, ENDED, quotaClient, type QuotaClient } from '../support/quota-client.js';

const ROOT = 'root-key-4d1c9e2b7a60';

describe.each(DIALECTS)('user quotas on %s', (dialect) => {
  let model: ScriptedModel;
  let t: TestApp;
  let api: QuotaClient;

  async function boot(env: Record<string, string> = {}): Promise<void> {
    t = await createTestApp({ dialect, model: { url: model.url }, env: { API_KEYS: `root:${ROOT}`, ADMIN_USERS: 'root', RATE_LIMIT_PER_MINUTE: '0', ...env } });
    api = quotaClient(await t.app.listen({ port: 0, host: '127.0.0.1' }), ROOT);
  }

  beforeEach(async () => {
    model = await startScriptedModel();
    await boot();
  });
  afterEach(async () => {
    await t.close();
    await model.close();
  });

  it('refuses a run beyond the daily run quota on every route that starts one, storing nothing', async () => {
    const key = await api.user('amy', { max_runs_per_day: 2 });
    for (let i = 0; i < 2; i++) {
      model.push(scripted.text('ok'));
      await api.ended(key, await api.runId(await api.startRun(key)));
    }
    const conversation = (await (await api.call(key, 'POST', '/conversations/', { agent_type: 'plan' })).json()) as { id: string };
    const refusals = [
      await api.startRun(key),
      await api.call(key, 'POST', `/conversations/${conversation.id}/runs`, { content: 'not stored' }),
      await api.call(key, 'POST', `/conversations/${conversation.id}/messages`, { content: 'not stored' }),
      await api.call(key, 'POST', '/agents/run', { agent_type: 'plan', prompt: 'p' }),
      await api.call(key, 'POST', '/agents/stream', { agent_type: 'plan', prompt: 'p' }),
    ];
    for (const refused of refusals) {
      expect(refused.status).toBe(429);
      expect(await refused.json()).toEqual({ detail: 'Daily run quota reached (2)' });
      // Until the next UTC midnight, at most a day.
      expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
      expect(Number(refused.headers.get('retry-after'))).toBeLessThanOrEqual(86_400);
    }
    expect(((await (await api.call(key, 'GET', `/conversations/${conversation.id}`)).json()) as { messages: unknown[] }).messages).toEqual([]);
    expect((await api.me(key)).usage).toMatchObject({ runs_today: 2 });
    // Another user is not held by amy's quota.
    const other = await api.user('ben', {});
    model.push(scripted.text('ok'));
    expect((await api.startRun(other)).status).toBe(202);
  });

  it('applies MAX_RUNS_PER_DAY to users without a quota of their own; 0 of their own means no limit, null the default again', async () => {
    await t.close();
    await boot({ MAX_RUNS_PER_DAY: '1', MAX_TOKENS_PER_DAY: '5000000', MAX_RUNS_PER_USER: '3' });
    const defaulted = await api.user('cat', {});
    const unlimited = await api.user('dan', { max_runs_per_day: 0 });
    expect((await api.me(defaulted)).quotas).toEqual({ max_concurrent_runs: 3, max_runs_per_day: 1, max_tokens_per_day: 5_000_000 });
    expect((await api.me(unlimited)).quotas).toEqual({ max_concurrent_runs: 3, max_runs_per_day: 0, max_tokens_per_day: 5_000_000 });
    for (let i = 0; i < 6; i++) model.push(scripted.text('ok'));
    expect((await api.startRun(defaulted)).status).toBe(202);
    const refused = await api.startRun(defaulted);
    expect([refused.status, await refused.json()]).toEqual([429, { detail: 'Daily run quota reached (1)' }]);
    for (let i = 0; i < 3; i++) expect((await api.startRun(unlimited)).status).toBe(202);
    // The root user of API_KEYS has the defaults too.
    expect((await api.startRun(ROOT)).status).toBe(202);
    expect((await api.startRun(ROOT)).status).toBe(429);
    // Back to the default: dan has three runs today, the default allows one.
    expect((await api.call(ROOT, 'PATCH', '/users/dan', { quotas: { max_runs_per_day: null } })).status).toBe(200);
    expect((await api.me(unlimited)).quotas.max_runs_per_day).toBe(1);
    expect((await api.startRun(unlimited)).status).toBe(429);
  });

  it('ends a run that reaches the token quota failed after its model call, keeps its events, and refuses the next one', async () => {
    const key = await api.user('eve', { max_tokens_per_day: 1 });
    // The answer calls a tool: a run that went on would list files and call the model again.
    model.push(scripted.toolCallsAfterText('Let me look around. ', { name: 'glob_files', arguments: { pattern: '*' } }), scripted.text('never sent'));
    const id = await api.runId(await api.startRun(key, 'explore'));
    const run = await api.ended(key, id);
    const usage = run.usage as { input_tokens: number; output_tokens: number; model_calls: number; tool_calls: number };
    const used = usage.input_tokens + usage.output_tokens;
    expect(used).toBeGreaterThan(1);
    expect(run).toMatchObject({ status: 'failed', error: `Daily token quota reached (${used} of 1)` });
    expect([usage.model_calls, usage.tool_calls]).toEqual([1, 0]);
    expect(model.requests).toHaveLength(1);
    const events = (await readRunEvents(api.address, id, { headers: api.headers(key) })).frames.map((f) => JSON.parse(f.data) as Record<string, unknown>);
    // The model call finished: its text was streamed whole and stored.
    expect(events.filter((e) => e.event === 'chunk').map((e) => e.data).join('')).toContain('Let me look around.');
    expect(events.some((e) => e.event === 'tool_start')).toBe(false);
    expect(events.at(-1)).toEqual({ event: 'error', error_message: `Daily token quota reached (${used} of 1)` });
    expect((await api.me(key)).usage).toMatchObject({ tokens_today: used });
    const refused = await api.startRun(key);
    expect([refused.status, await refused.json()]).toEqual([429, { detail: `Daily token quota reached (${used} of 1)` }]);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
  });

  it('lets a run under the token quota finish, and counts its tokens toward the next', async () => {
    const key = await api.user('fay', { max_tokens_per_day: 10_000_000 });
    model.push(scripted.text('fine'));
    const run = await api.ended(key, await api.runId(await api.startRun(key)));
    expect(run).toMatchObject({ status: 'succeeded', response: 'fine' });
    const usage = run.usage as { input_tokens: number; output_tokens: number };
    // Lowered to exactly what was used: the quota is used up, so the next run is refused.
    const used = usage.input_tokens + usage.output_tokens;
    expect((await api.call(ROOT, 'PATCH', '/users/fay', { quotas: { max_tokens_per_day: used } })).status).toBe(200);
    const refused = await api.startRun(key);
    expect([refused.status, await refused.json()]).toEqual([429, { detail: `Daily token quota reached (${used} of ${used})` }]);
  });

  it("queues a user's run beyond max_concurrent_runs until one of theirs ends; 0 of their own lifts MAX_RUNS_PER_USER", async () => {
    await t.close();
    await boot({ MAX_RUNS_PER_USER: '1' });
    const one = await api.user('gus', { max_concurrent_runs: 1 });
    const first = deferred();
    model.push(scripted.chunks('busy ', scripted.until(first.promise), 'done'), scripted.text('second'));
    const busy = await api.runId(await api.startRun(one));
    await until(() => api.run(one, busy), (r) => r.status === 'running', 'the first run to start');
    const waiting = await api.runId(await api.startRun(one));
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect((await api.run(one, waiting)).status).toBe('queued');
    expect(model.requests).toHaveLength(1);
    first.resolve();
    expect(await api.ended(one, waiting)).toMatchObject({ status: 'succeeded', response: 'second' });
    // No limit of the user's own: two of hers run at once although MAX_RUNS_PER_USER is 1.
    const free = await api.user('hal', { max_concurrent_runs: 0 });
    const both = deferred();
    model.push(scripted.chunks('a ', scripted.until(both.promise), 'b'), scripted.chunks('c ', scripted.until(both.promise), 'd'));
    const ids = [await api.runId(await api.startRun(free)), await api.runId(await api.startRun(free))];
    for (const id of ids) await until(() => api.run(free, id), (r) => r.status === 'running', 'both runs to start');
    both.resolve();
    for (const id of ids) expect((await api.ended(free, id)).status).toBe('succeeded');
  });

  it("counts a cancelled queued run among the day's runs, and frees no place it never held", async () => {
    const key = await api.user('ida', { max_concurrent_runs: 1, max_runs_per_day: 3 });
    const hold = deferred();
    model.push(scripted.chunks('busy ', scripted.until(hold.promise), 'done'), scripted.text('third'));
    const busy = await api.runId(await api.startRun(key));
    await until(() => api.run(key, busy), (r) => r.status === 'running', 'the first run to start');
    const queued = await api.runId(await api.startRun(key));
    expect((await api.call(key, 'POST', `/runs/${queued}/cancel`, {})).status).toBe(202);
    expect((await api.run(key, queued)).status).toBe('cancelled');
    // Still one place only: the third waits for the first, not for the cancelled one.
    const third = await api.runId(await api.startRun(key));
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect((await api.run(key, third)).status).toBe('queued');
    hold.resolve();
    expect((await api.ended(key, third)).status).toBe('succeeded');
    expect((await api.startRun(key)).status).toBe(429);
    expect(ENDED.has((await api.run(key, busy)).status as string)).toBe(true);
  });

  /** A user's run held running, and a second one queued behind it (max_concurrent_runs 1): the events of the second, read once it ended. */
  async function queuedBehindBusy(key: string, hold: Promise<void>): Promise<{ busy: string; queued: string }> {
    model.push(scripted.chunks('busy ', scripted.until(hold), 'done'), scripted.text('never sent'));
    const busy = await api.runId(await api.startRun(key));
    await until(() => api.run(key, busy), (r) => r.status === 'running', 'the first run to start');
    const queued = await api.runId(await api.startRun(key));
    expect((await api.run(key, queued)).status).toBe('queued');
    return { busy, queued };
  }
  const eventsOf = async (key: string, id: string) =>
    (await readRunEvents(api.address, id, { headers: api.headers(key) })).frames.map((f) => JSON.parse(f.data) as Record<string, unknown>);

  it('fails a queued run at its start when the runs that ended meanwhile used the day\'s tokens up, without calling the model', async () => {
    const key = await api.user('jon', { max_concurrent_runs: 1, max_tokens_per_day: 1 });
    const hold = deferred();
    // Submitted while nothing had ended: no tokens used yet, so the second run is accepted.
    const { busy, queued } = await queuedBehindBusy(key, hold.promise);
    hold.resolve();
    const first = await api.ended(key, busy);
    const usage = first.usage as { input_tokens: number; output_tokens: number };
    const used = usage.input_tokens + usage.output_tokens;
    const detail = `Daily token quota reached (${used} of 1)`;
    expect(await api.ended(key, queued)).toMatchObject({ status: 'failed', error: detail, usage: { model_calls: 0 } });
    // Only the first run reached the model; the second kept its events, the queued notice first.
    expect(model.requests).toHaveLength(1);
    const events = await eventsOf(key, queued);
    expect(events[0]).toMatchObject({ event: 'thinking' });
    expect(events.at(-1)).toEqual({ event: 'error', error_message: detail });
    // The same text a submission gets now.
    const refused = await api.startRun(key);
    expect([refused.status, await refused.json()]).toEqual([429, { detail }]);
  });

  it('fails a queued run at its start when its daily run quota was lowered below its day\'s runs meanwhile', async () => {
    const key = await api.user('kay', { max_concurrent_runs: 1, max_runs_per_day: 5 });
    const hold = deferred();
    const { busy, queued } = await queuedBehindBusy(key, hold.promise);
    expect((await api.call(ROOT, 'PATCH', '/users/kay', { quotas: { max_runs_per_day: 1 } })).status).toBe(200);
    hold.resolve();
    expect((await api.ended(key, busy)).status).toBe('succeeded');
    expect(await api.ended(key, queued)).toMatchObject({ status: 'failed', error: 'Daily run quota reached (1)' });
    expect(model.requests).toHaveLength(1);
    expect((await eventsOf(key, queued)).at(-1)).toEqual({ event: 'error', error_message: 'Daily run quota reached (1)' });
  });

  it('cancels a queued run at its start when its user was disabled while it waited, keeping its events', async () => {
    const key = await api.user('lin', { max_concurrent_runs: 1 });
    const hold = deferred();
    const { busy, queued } = await queuedBehindBusy(key, hold.promise);
    // Written to the database directly: as a replica that disabled her before this one stored the
    // run would have, its cancel of her runs having missed this one.
    const users = t.database.repository.users;
    await users.updateUser('lin', { disabled: true }, 'root', new Date());
    hold.resolve();
    await until(() => t.database.repository.runs.findRun(queued), (r) => r?.status === 'cancelled', 'the queued run to end');
    expect(model.requests).toHaveLength(1);
    // Enabled again to read what the run kept.
    await users.updateUser('lin', { disabled: false }, 'root', new Date());
    expect(await api.run(key, queued)).toMatchObject({ status: 'cancelled', error: 'Run cancelled' });
    expect((await eventsOf(key, queued))[0]).toMatchObject({ event: 'thinking' });
    // The slot is given to the queued run as the busy one finishes: its own end may be stored a moment later.
    expect(ENDED.has((await api.ended(key, busy)).status as string)).toBe(true);
  });
});
