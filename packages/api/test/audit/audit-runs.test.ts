import { scripted, startScriptedModel, type ScriptedModel } from '@mada/testkit';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../support/app.js';
import { DIALECTS } from '../support/databases.js';
import { until } from '../support/until.js';

/** Runs, approvals, reverts and lockouts, recorded in the audit log (TEAMS.md section 10). */

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

    const created = { agent_type: 'task', mode: 'default', working_dir: t.workdir, conversation_id: null };
    expect(await audit('?action=run.created')).toEqual([
      { actor: 'bob', action: 'run.created', target: `run:${own}`, detail: expect.objectContaining({ agent_type: 'task', conversation_id: null }) },
      { actor: 'bob', action: 'run.created', target: `run:${others}`, detail: expect.objectContaining({ agent_type: 'task' }) },
    ]);
    expect(Object.keys((await audit('?action=run.created'))[0]!.detail as Json).sort()).toEqual(Object.keys(created).sort());
    expect(await audit('?action=run.cancelled')).toEqual([
      { actor: 'bob', action: 'run.cancelled', target: `run:${own}`, detail: { user: 'bob' } },
      { actor: 'root', action: 'run.cancelled', target: `run:${others}`, detail: { user: 'bob' } },
    ]);
    expect(JSON.stringify((await as(ROOT_KEY, 'GET', '/audit')).body)).not.toContain(PROMPT);
    expect((await as(ROOT_KEY, 'GET', '/audit/verify')).body).toMatchObject({ ok: true, first_bad_seq: null });
  });

  /** The id of the approval `runId` waits for. */
  async function pendingApproval(runId: string): Promise<string> {
    const listed = await as(BOB_KEY, 'GET', '/approvals?status=pending');
    const found = (listed.body.approvals as Json[]).find((item) => item.run_id === runId);
    expect(found).toBeDefined();
    return found!.id as string;
  }

  it('records who answered an approval, what they were shown, and the rules approve_always added', async () => {
    const answer = async (decision: string): Promise<{ run: string; approval: string }> => {
      const run = await waitingRun();
      const approval = await pendingApproval(run);
      // What the run says once it has its answer.
      model.push(scripted.text('done'));
      expect((await as(BOB_KEY, 'POST', `/approvals/${approval}`, { decision })).status).toBe(200);
      await until(() => as(BOB_KEY, 'GET', `/runs/${run}`), (found) => found.body.status === 'succeeded', 'the run to end');
      return { run, approval };
    };
    const { run: denied, approval: deniedApproval } = await answer('deny');
    const { run: always, approval: alwaysApproval } = await answer('approve_always');

    expect(await audit('?action=approval.decided')).toEqual([
      { actor: 'bob', action: 'approval.decided', target: `approval:${deniedApproval}`, detail: { run: denied, tool: 'bash', decision: 'deny', command: 'rm nothing.txt' } },
      { actor: 'bob', action: 'approval.decided', target: `approval:${alwaysApproval}`, detail: { run: always, tool: 'bash', decision: 'approve_always', command: 'rm nothing.txt' } },
    ]);
    const rules = await audit('?action=rule.added');
    expect(rules.length).toBeGreaterThan(0);
    for (const rule of rules) {
      expect(rule).toMatchObject({ actor: 'bob', target: `approval:${alwaysApproval}`, detail: { tool: 'bash', working_dir: t.workdir } });
      expect(typeof (rule.detail as Json).match).toBe('string');
    }
  });

  it('records a revert with the paths it put back, never their contents', async () => {
    writeFileSync(join(t.workdir, 'notes.txt'), 'before\n');
    model.push(scripted.toolCalls({ name: 'write_file', arguments: { file_path: 'notes.txt', content: 'secret contents 51c2\n' } }), scripted.text('written'));
    const started = await as(BOB_KEY, 'POST', '/runs', { agent_type: 'task', prompt: 'write it', working_dir: '.', mode: 'auto_accept' });
    const id = started.body.id as string;
    await until(() => as(BOB_KEY, 'GET', `/runs/${id}`), (run) => run.body.status === 'succeeded', 'the run to succeed');
    expect(await as(BOB_KEY, 'POST', `/runs/${id}/revert`, {})).toMatchObject({ status: 200, body: { reverted: ['notes.txt'] } });

    expect(await audit('?action=checkpoint.reverted')).toEqual([
      { actor: 'bob', action: 'checkpoint.reverted', target: `run:${id}`, detail: { working_dir: t.workdir, count: 1, paths: ['notes.txt'] } },
    ]);
    expect(JSON.stringify((await as(ROOT_KEY, 'GET', '/audit')).body)).not.toContain('secret contents');
  });
});

describe.each(DIALECTS)('approvals that expire and clients locked out, in the audit log on %s', (dialect) => {
  let model: ScriptedModel;
  let t: TestApp;
  let address: string;

  beforeAll(async () => {
    model = await startScriptedModel();
    t = await createTestApp({
      dialect,
      model: { url: model.url },
      env: { API_KEYS: `root:${ROOT_KEY},bob:${BOB_KEY}`, ADMIN_USERS: 'root', RATE_LIMIT_PER_MINUTE: '0', APPROVAL_TIMEOUT_SECONDS: '1' },
    });
    address = await t.app.listen({ port: 0, host: '127.0.0.1' });
  });
  afterAll(async () => {
    await t?.close();
    await model?.close();
  });

  const entries = async (action: string) => (await t.audit.list({ after: 0, limit: 100, action })).entries.map(({ actor, action, target, detail }) => ({ actor, action, target, detail }));

  it('records an approval nobody answered as expired, by the service', async () => {
    model.push(scripted.toolCalls({ name: 'bash', arguments: { command: 'rm nothing.txt' } }), scripted.text('gave up'));
    const started = await fetch(`${address}/runs`, {
      method: 'POST',
      headers: { 'x-api-key': BOB_KEY, 'content-type': 'application/json' },
      body: JSON.stringify({ agent_type: 'task', prompt: 'remove it', working_dir: '.' }),
    });
    const id = ((await started.json()) as Json).id as string;
    await until(() => entries('approval.expired'), (found) => found.length === 1, 'the approval to expire');
    expect(await entries('approval.expired')).toEqual([
      { actor: 'system', action: 'approval.expired', target: expect.stringMatching(/^approval:/), detail: { run: id, tool: 'bash', command: 'rm nothing.txt' } },
    ]);
  });

  it('records a client reaching the failed-key limit once, not each failure after', async () => {
    for (let i = 0; i < 35; i++) await fetch(`${address}/runs`, { headers: { 'x-api-key': `wrong-key-${i}` } });
    const locked = await until(() => entries('auth.locked'), (found) => found.length > 0, 'the lockout to be recorded');
    expect(locked).toEqual([{ actor: 'system', action: 'auth.locked', target: expect.stringMatching(/^client:/), detail: { client: expect.any(String) } }]);
  });
});
