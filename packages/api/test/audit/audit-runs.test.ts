import { scripted, startScriptedModel, type ScriptedModel } from '@mada/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../support/app.js';
import { DIALECTS } from '../support/databases.js';
import { until } from '../support/until.js';

/** Runs created and cancelled, recorded in the audit log with the change (TEAMS.md section 10). */

const ROOT_KEY = 'root-key-0e6b3f9a1c57';
const BOB_KEY = 'bob-key-4a8d2c1e7f30';
const PROMPT = 'secret prompt 7f3e9b';
type Json = Record<string, unknown>;

describe.each(DIALECTS)('runs in the audit log on %s', (dialect) => {
  let model: ScriptedModel;
  let t: TestApp;
  let address: string;

  const as = async (key: string, method: string, path: string, body?: Json): Promise<{ status: number; body: Json }> => {
    const response = await fetch(`${address}${path}`, {
      method,
      headers: { 'x-api-key': key, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await response.text();
    return { status: response.status, body: text === '' ? {} : (JSON.parse(text) as Json) };
  };
  const audit = async (query: string) => ((await as(ROOT_KEY, 'GET', `/audit${query}`)).body.entries as Json[]).map(({ actor, action, target, detail }) => ({ actor, action, target, detail }));

  beforeAll(async () => {
    model = await startScriptedModel();
    t = await createTestApp({
      dialect,
      model: { url: model.url },
      env: { API_KEYS: `root:${ROOT_KEY},bob:${BOB_KEY}`, ADMIN_USERS: 'root', RATE_LIMIT_PER_MINUTE: '0' },
    });
    address = await t.app.listen({ port: 0, host: '127.0.0.1' });
  });
  afterAll(async () => {
    await t?.close();
    await model?.close();
  });

  /** A run of bob's that waits for an approval (bash `rm` asks in the default mode). */
  async function waitingRun(): Promise<string> {
    model.push(scripted.toolCalls({ name: 'bash', arguments: { command: 'rm nothing.txt' } }));
    const started = await as(BOB_KEY, 'POST', '/runs', { agent_type: 'task', prompt: PROMPT, working_dir: '.' });
    expect(started.status).toBe(202);
    const id = started.body.id as string;
    await until(() => as(BOB_KEY, 'GET', `/runs/${id}`), (run) => run.body.status === 'waiting_approval', 'the run to wait for its approval');
    return id;
  }

  it('records who created a run and who cancelled it, without the prompt', async () => {
    const own = await waitingRun();
    expect((await as(BOB_KEY, 'POST', `/runs/${own}/cancel`)).status).toBe(202);
    const others = await waitingRun();
    expect((await as(ROOT_KEY, 'POST', `/runs/${others}/cancel`)).status).toBe(202);
    await until(() => as(BOB_KEY, 'GET', `/runs/${others}`), (run) => run.body.status === 'cancelled', 'the run to end cancelled');
    // Cancelling an ended run changes nothing and records nothing.
    expect((await as(ROOT_KEY, 'POST', `/runs/${others}/cancel`)).status).toBe(409);

    const created = { agentType: 'task', mode: 'default', workingDir: t.workdir, conversationId: null };
    expect(await audit('?action=run.created')).toEqual([
      { actor: 'bob', action: 'run.created', target: `run:${own}`, detail: expect.objectContaining({ agentType: 'task', conversationId: null }) },
      { actor: 'bob', action: 'run.created', target: `run:${others}`, detail: expect.objectContaining({ agentType: 'task' }) },
    ]);
    expect(Object.keys((await audit('?action=run.created'))[0]!.detail as Json).sort()).toEqual(Object.keys(created).sort());
    expect(await audit('?action=run.cancelled')).toEqual([
      { actor: 'bob', action: 'run.cancelled', target: `run:${own}`, detail: { user: 'bob' } },
      { actor: 'root', action: 'run.cancelled', target: `run:${others}`, detail: { user: 'bob' } },
    ]);
    expect(JSON.stringify((await as(ROOT_KEY, 'GET', '/audit')).body)).not.toContain(PROMPT);
    expect((await as(ROOT_KEY, 'GET', '/audit/verify')).body).toMatchObject({ ok: true, first_bad_seq: null });
  });
});
