import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { scripted, startScriptedModel, type ScriptedModel } from '@mada/testkit';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../support/app.js';
import { DIALECTS } from '../support/databases.js';
import { readRunEvents } from '../support/run-events.js';
import { until } from '../support/until.js';
import { tempDir } from '../../../../test/helpers/temp-dirs.js';

const KEYS = { ann: 'ann-key-0123456789', bob: 'bob-key-0123456789' };
const ENDED = new Set(['succeeded', 'failed', 'cancelled', 'interrupted']);
const CANNOT_WAIT = 'Needs approval, and this run cannot wait for it (on_ask=deny)';


type Json = Record<string, unknown>;

describe.each(DIALECTS)('approvals on %s', (dialect) => {
  let model: ScriptedModel;
  let t: TestApp;
  let address: string;

  async function boot(env: Record<string, string> = {}): Promise<void> {
    t = await createTestApp({ dialect, model: { url: model.url }, env: { API_KEYS: `ann:${KEYS.ann},bob:${KEYS.bob}`, RATE_LIMIT_PER_MINUTE: '0', ...env } });
    address = await t.app.listen({ port: 0, host: '127.0.0.1' });
  }

  beforeEach(async () => {
    model = await startScriptedModel();
  });
  afterEach(async () => {
    await t.close();
    await model.close();
  });

  const as = (user: keyof typeof KEYS) => ({ 'x-api-key': KEYS[user], 'content-type': 'application/json' });
  const post = (path: string, body: unknown, user: keyof typeof KEYS = 'ann') =>
    fetch(`${address}${path}`, { method: 'POST', headers: as(user), body: JSON.stringify(body) });
  const getJson = async (path: string, user: keyof typeof KEYS = 'ann') => (await (await fetch(`${address}${path}`, { headers: as(user) })).json()) as Json;
  const startRun = async (body: Json = {}): Promise<string> => {
    const response = await post('/runs', { agent_type: 'task', prompt: 'do it', working_dir: '.', ...body });
    expect(response.status).toBe(202);
    return ((await response.json()) as { id: string }).id;
  };
  // The list and its total are two statements: one may see an approval stored between them.
  const pending = () => until(() => getJson('/approvals?status=pending'), (list) => (list.approvals as Json[]).length > 0, 'a pending approval');
  const ended = (id: string) => until(() => getJson(`/runs/${id}`), (run) => ENDED.has(run.status as string), `run ${id} to end`);
  const events = async (id: string) => (await readRunEvents(address, id, { headers: as('ann') })).frames.map((f) => JSON.parse(f.data) as Json);
  /** What the model read as the result of its last tool call (in the request after it). */
  const lastToolResult = (requestIndex: number) => model.requests[requestIndex]?.messages.filter((m) => m.role === 'tool').at(-1)?.content;
  const bash = (command: string) => scripted.toolCalls({ name: 'bash', arguments: { command } });

  it('pauses a streamed run on an ask, shows it to a second client, and runs the command once approved', async () => {
    await boot();
    writeFileSync(join(t.workdir, 'victim.txt'), 'x');
    model.push(bash('rm victim.txt'), scripted.text('removed it'));
    const id = await startRun();
    // The first client follows the events from the start; the answer comes from a second one.
    const following = events(id);
    const list = await pending();
    expect(list.approvals).toHaveLength(1);
    const approval = (list.approvals as Json[])[0]!;
    expect(approval).toMatchObject({ run_id: id, tool: 'bash', args: { command: 'rm victim.txt' }, status: 'pending', decided_at: null, message: null });
    expect(approval.reason).toContain('"rm"');
    expect((await getJson(`/runs/${id}`)).status).toBe('waiting_approval');
    expect(existsSync(join(t.workdir, 'victim.txt'))).toBe(true);
    await expect.poll(async () => t.metrics.render()).toMatch(/^mada_approvals_pending 1$/m);

    const answer = await post(`/approvals/${approval.id as string}`, { decision: 'approve' });
    expect(answer.status).toBe(200);
    expect(await answer.json()).toMatchObject({ id: approval.id, status: 'approved', message: null });
    expect((await ended(id)).status).toBe('succeeded');
    expect(existsSync(join(t.workdir, 'victim.txt'))).toBe(false);
    expect(await t.metrics.render()).toMatch(/^mada_approvals_pending 0$/m);

    const frames = await following;
    const kinds = frames.map((f) => f.event);
    expect(kinds.indexOf('tool_start')).toBeLessThan(kinds.indexOf('approval_requested'));
    expect(kinds.indexOf('approval_requested')).toBeLessThan(kinds.indexOf('approval_resolved'));
    expect(kinds.indexOf('approval_resolved')).toBeLessThan(kinds.indexOf('tool_done'));
    expect(frames.find((f) => f.event === 'approval_requested')).toEqual({
      event: 'approval_requested',
      approval_id: approval.id,
      tool: 'bash',
      args: { command: 'rm victim.txt' },
      reason: approval.reason,
      expires_at: approval.expires_at,
    });
    expect(frames.find((f) => f.event === 'approval_resolved')).toEqual({ event: 'approval_resolved', approval_id: approval.id, decision: 'approved' });
    expect(frames.find((f) => f.event === 'tool_done')).toMatchObject({ tool: 'bash', outcome: 'ok' });
  });

  it('does not run a denied `npm install x`, and the agent reads the denial', async () => {
    await boot();
    model.push(bash('npm install x'), scripted.text('ok, not installing'));
    const id = await startRun();
    const approval = ((await pending()).approvals as Json[])[0]!;
    expect(approval.args).toEqual({ command: 'npm install x' });
    expect((await (await post(`/approvals/${approval.id as string}`, { decision: 'deny', message: 'not on this machine' })).json()) as Json).toMatchObject({
      status: 'denied',
      message: 'not on this machine',
    });
    expect((await ended(id)).status).toBe('succeeded');
    expect(lastToolResult(1)).toBe('Denied by the user: not on this machine');
    expect(existsSync(join(t.workdir, 'node_modules'))).toBe(false);
    expect(existsSync(join(t.workdir, 'package-lock.json'))).toBe(false);
    const frames = await events(id);
    const resolved = frames.find((f) => f.event === 'approval_resolved');
    expect(resolved).toEqual({ event: 'approval_resolved', approval_id: approval.id, decision: 'denied', message: 'not on this machine' });
    expect(frames.find((f) => f.event === 'tool_done')).toEqual({
      event: 'tool_done',
      tool: 'bash',
      result_summary: 'Denied by the user: not on this machine',
      outcome: 'denied',
    });
  });

  it('denies an approval nobody answers in time', async () => {
    await boot({ APPROVAL_TIMEOUT_SECONDS: '1' });
    writeFileSync(join(t.workdir, 'keep.txt'), 'x');
    model.push(bash('rm keep.txt'), scripted.text('gave up'));
    const id = await startRun();
    expect((await ended(id)).status).toBe('succeeded');
    expect(lastToolResult(1)).toBe('Denied by the user: Approval timed out');
    expect(existsSync(join(t.workdir, 'keep.txt'))).toBe(true);
    const list = await getJson('/approvals');
    expect((list.approvals as Json[])[0]).toMatchObject({ status: 'denied', message: 'Approval timed out' });
    expect((await getJson('/approvals?status=pending')).total).toBe(0);
  });

  it('stops asking after approve_always, for this user and working directory', async () => {
    await boot();
    for (const name of ['a.txt', 'b.txt']) writeFileSync(join(t.workdir, name), 'x');
    model.push(bash('rm a.txt'), bash('rm b.txt'), scripted.text('both gone'));
    const id = await startRun();
    const approval = ((await pending()).approvals as Json[])[0]!;
    expect((await post(`/approvals/${approval.id as string}`, { decision: 'approve_always' })).status).toBe(200);
    expect((await ended(id)).status).toBe('succeeded');
    expect(existsSync(join(t.workdir, 'a.txt')) || existsSync(join(t.workdir, 'b.txt'))).toBe(false);
    expect((await events(id)).filter((f) => f.event === 'approval_requested')).toHaveLength(1);
    expect((await getJson('/approvals')).total).toBe(1);
  });

  it('never waits with on_ask=deny, nor on the blocking /agents/run', async () => {
    await boot();
    writeFileSync(join(t.workdir, 'keep.txt'), 'x');
    model.push(bash('rm keep.txt'), scripted.text('could not'));
    const id = await startRun({ on_ask: 'deny' });
    expect((await ended(id)).status).toBe('succeeded');
    expect(lastToolResult(1)).toBe(CANNOT_WAIT);
    expect((await events(id)).find((f) => f.event === 'tool_done')).toMatchObject({ result_summary: CANNOT_WAIT, outcome: 'refused' });

    model.push(bash('rm keep.txt'), scripted.text('could not either'));
    const blocking = await post('/agents/run', { agent_type: 'task', prompt: 'do it', working_dir: '.' });
    expect(((await blocking.json()) as Json).response).toBe('could not either');
    expect(lastToolResult(3)).toBe(CANNOT_WAIT);
    expect(existsSync(join(t.workdir, 'keep.txt'))).toBe(true);
    expect((await getJson('/approvals')).total).toBe(0);
  });

  it('asks before other spellings of a default ask: `git checkout <file>` without `--`, `git reset --har`, `npm add`', async () => {
    await boot();
    const git = (...args: string[]) => execFileSync('git', ['-C', t.workdir, '-c', 'user.name=t', '-c', 'user.email=t@t', ...args], { stdio: 'pipe' });
    git('init', '-q');
    writeFileSync(join(t.workdir, 'work.txt'), 'committed\n');
    git('add', 'work.txt');
    git('commit', '-qm', 'base');
    writeFileSync(join(t.workdir, 'work.txt'), 'hours of local changes\n');
    for (const [i, command] of ['git checkout work.txt', 'git reset --har', 'npm add left-pad'].entries()) {
      model.push(bash(command), scripted.text('could not'));
      const id = await startRun({ on_ask: 'deny' });
      expect((await ended(id)).status).toBe('succeeded');
      expect(lastToolResult(2 * i + 1), command).toBe(CANNOT_WAIT);
    }
    expect(readFileSync(join(t.workdir, 'work.txt'), 'utf8')).toBe('hours of local changes\n');
    expect(existsSync(join(t.workdir, 'node_modules'))).toBe(false);
  });

  it('asks before dropping a stash or force-deleting a branch, which no checkpoint can give back', async () => {
    await boot();
    const git = (...args: string[]) => execFileSync('git', ['-C', t.workdir, '-c', 'user.name=t', '-c', 'user.email=t@t', ...args], { stdio: 'pipe' }).toString();
    git('init', '-q', '-b', 'main');
    writeFileSync(join(t.workdir, 'work.txt'), 'committed\n');
    git('add', 'work.txt');
    git('commit', '-qm', 'base');
    git('switch', '-qc', 'feature');
    writeFileSync(join(t.workdir, 'work.txt'), 'unmerged work\n');
    git('commit', '-qam', 'feature work');
    git('switch', '-q', 'main');
    writeFileSync(join(t.workdir, 'work.txt'), 'stashed changes\n');
    git('stash', '-q');
    for (const [i, command] of ['git stash drop', 'git stash clear', 'git branch -fd feature', 'git reflog expire --expire=now --all'].entries()) {
      model.push(bash(command), scripted.text('could not'));
      const id = await startRun({ on_ask: 'deny' });
      expect((await ended(id)).status).toBe('succeeded');
      expect(lastToolResult(2 * i + 1), command).toBe(CANNOT_WAIT);
    }
    expect(git('stash', 'list')).toContain('stash@{0}');
    expect(git('branch', '--list', 'feature')).toContain('feature');
    expect(git('reflog', 'show', '--format=%gs', 'feature')).not.toBe('');
  });

  it('never asks in auto_accept', async () => {
    await boot();
    writeFileSync(join(t.workdir, 'victim.txt'), 'x');
    model.push(bash('rm victim.txt'), scripted.text('done'));
    const id = await startRun({ mode: 'auto_accept' });
    expect((await ended(id)).status).toBe('succeeded');
    expect(existsSync(join(t.workdir, 'victim.txt'))).toBe(false);
    expect((await events(id)).some((f) => f.event === 'approval_requested')).toBe(false);
  });

  it('still refuses on a deny rule in auto_accept, and applies a rule for `npm publish` to `npm --loglevel info publish`, `\'npm\' publish` and `true && npm publish`', async () => {
    const rulesFile = join(tempDir('mada-rules-'), 'rules.json');
    writeFileSync(rulesFile, JSON.stringify({ rules: [{ tool: 'bash', match: 'npm publish', action: 'deny' }] }));
    await boot({ APPROVAL_RULES_FILE: rulesFile });
    const commands = ['npm --loglevel info publish', "'npm' publish", 'true && npm publish'];
    model.push(...commands.map(bash), scripted.text('refused thrice'));
    const id = await startRun({ mode: 'auto_accept' });
    expect((await ended(id)).status).toBe('succeeded');
    for (let i = 1; i <= commands.length; i++) expect(lastToolResult(i)).toBe('Error: bash refused by approval rule bash "npm publish" (deny)');
    expect((await events(id)).filter((f) => f.event === 'tool_done').map((f) => f.outcome)).toEqual(['refused', 'refused', 'refused']);
  });

  it('puts the approval events on the legacy /agents/stream too', async () => {
    await boot();
    writeFileSync(join(t.workdir, 'victim.txt'), 'x');
    model.push(bash('rm victim.txt'), scripted.text('removed'));
    const response = await post('/agents/stream', { agent_type: 'task', prompt: 'do it', working_dir: '.' });
    const body = response.text();
    const approval = ((await pending()).approvals as Json[])[0]!;
    expect((await post(`/approvals/${approval.id as string}`, { decision: 'approve' })).status).toBe(200);
    const frames = (await body)
      .split('\n\n')
      .filter((block) => block.startsWith('data: '))
      .map((block) => JSON.parse(block.slice('data: '.length)) as Json);
    expect(frames.map((f) => f.event)).toEqual(['tool_start', 'approval_requested', 'approval_resolved', 'tool_done', 'response', 'done']);
    expect(existsSync(join(t.workdir, 'victim.txt'))).toBe(false);
  });

  it('wakes a run waiting on one replica when the answer is given on another', async () => {
    await boot();
    const other = await createTestApp({ model: { url: model.url }, shareDatabaseOf: t, env: { API_KEYS: `ann:${KEYS.ann}`, RATE_LIMIT_PER_MINUTE: '0' } });
    try {
      const otherAddress = await other.app.listen({ port: 0, host: '127.0.0.1' });
      writeFileSync(join(t.workdir, 'victim.txt'), 'x');
      model.push(bash('rm victim.txt'), scripted.text('removed'));
      const id = await startRun();
      const approval = ((await pending()).approvals as Json[])[0]!;
      const answer = await fetch(`${otherAddress}/approvals/${approval.id as string}`, { method: 'POST', headers: as('ann'), body: JSON.stringify({ decision: 'approve' }) });
      expect(answer.status).toBe(200);
      expect((await ended(id)).status).toBe('succeeded');
      expect(existsSync(join(t.workdir, 'victim.txt'))).toBe(false);
    } finally {
      await other.close();
    }
  });

  it("answers 403 for another user's approval, 404 for an unknown one and 409 once decided; a cancelled run's approval is denied", async () => {
    await boot();
    model.push(bash('rm nothing.txt'), scripted.text('never'));
    const id = await startRun();
    const approval = ((await pending()).approvals as Json[])[0]!;
    const path = `/approvals/${approval.id as string}`;
    expect((await getJson('/approvals?status=pending', 'bob')).total).toBe(0);
    const forbidden = await post(path, { decision: 'approve' }, 'bob');
    expect(forbidden.status).toBe(403);
    expect(await forbidden.json()).toEqual({ detail: 'Not authorized' });
    expect(await (await post('/approvals/00000000-0000-4000-8000-000000000000', { decision: 'approve' })).json()).toEqual({ detail: 'Approval not found' });
    expect((await post('/approvals/not-a-uuid', { decision: 'approve' })).status).toBe(404);
    expect((await post(path, { decision: 'maybe' })).status).toBe(422);

    expect((await post(`/runs/${id}/cancel`, {})).status).toBe(202);
    expect((await ended(id)).status).toBe('cancelled');
    const decided = await post(path, { decision: 'approve' });
    expect(decided.status).toBe(409);
    expect(await decided.json()).toEqual({ detail: 'Approval already decided' });
    expect((await getJson('/approvals')).approvals).toMatchObject([{ status: 'denied', message: 'Run cancelled' }]);
  });
});
