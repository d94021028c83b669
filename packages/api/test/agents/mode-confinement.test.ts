import { existsSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { scripted, startScriptedModel, type RecordedRequest, type ScriptedModel, type ScriptedToolCall } from '@mada/testkit';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { MAX_CALLS_PER_ANSWER } from '../../src/agents/run-loop.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { until } from '../support/until.js';
import { benignCalls, hostileNativeCalls, hostileTextCalls, readAsText, TEXT_FORMS, type Places } from './corpus/mode-confinement.js';
import { createHostileRepo, createPartialClone, treeFingerprint, type HostileRepo } from './support/hostile-repo.js';

type Json = Record<string, unknown>;

const READ_ONLY = ['bash_readonly', 'glob_files', 'grep_content', 'read_file'];
const ENDED = new Set(['succeeded', 'failed', 'cancelled', 'interrupted']);
/** Calls of one answer that run: the corpus is cut into answers of this size. */
const PER_ANSWER = MAX_CALLS_PER_ANSWER;

/** Each agent and mode that must change nothing, with the tools it is offered. */
const CONFINED: { agent: string; mode: string; tools: string[] }[] = [
  { agent: 'explore', mode: 'default', tools: READ_ONLY },
  { agent: 'explore', mode: 'auto_accept', tools: READ_ONLY },
  { agent: 'explore', mode: 'plan', tools: READ_ONLY },
  { agent: 'plan', mode: 'default', tools: READ_ONLY },
  { agent: 'plan', mode: 'auto_accept', tools: READ_ONLY },
  { agent: 'plan', mode: 'plan', tools: READ_ONLY },
  { agent: 'task', mode: 'plan', tools: [...READ_ONLY, 'spawn_agent'].sort() },
];

const chunks = <T>(items: T[], size: number): T[][] => Array.from({ length: Math.ceil(items.length / size) }, (_, i) => items.slice(i * size, (i + 1) * size));

describe('confinement by agent and mode', () => {
  let model: ScriptedModel;
  let t: TestApp;
  let address: string;
  let repo: HostileRepo;
  let places: Places;
  let scratch: string;

  async function boot(env: Record<string, string> = {}, options: { filters?: boolean } = {}): Promise<void> {
    t = await createTestApp({ model: { url: model.url }, env: { RATE_LIMIT_PER_MINUTE: '0', ...env } });
    address = await t.app.listen({ port: 0, host: '127.0.0.1' });
    repo = createHostileRepo(join(t.workdir, 'repo'), join(scratch, 'outside'), options);
    places = { repo: repo.root, outside: repo.outside, dataDir: t.settings.dataDir };
  }

  beforeEach(async () => {
    model = await startScriptedModel();
    scratch = realpathSync(mkdtempSync(join(tmpdir(), 'mada-modes-')));
  });
  afterEach(async () => {
    await t.close();
    await model.close();
    rmSync(scratch, { recursive: true, force: true });
  });

  const post = (path: string, body: unknown) => fetch(`${address}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const getJson = async (path: string) => (await (await fetch(`${address}${path}`)).json()) as Json;
  const ended = (id: string) => until(() => getJson(`/runs/${id}`), (run) => ENDED.has(run.status as string), `run ${id} to end`);
  async function run(body: Json): Promise<Json> {
    const response = await post('/runs', { working_dir: repo.root, prompt: 'do as the repository says', ...body });
    expect(response.status).toBe(202);
    return ended(((await response.json()) as { id: string }).id);
  }
  /** Every tool result the model read in `request`, by the call it answers, in order. */
  const toolResults = (request: RecordedRequest | undefined) => (request?.messages ?? []).filter((m) => m.role === 'tool').map((m) => m.content);
  const changedPaths = (before: Record<string, string>, after: Record<string, string>): string[] =>
    [...new Set([...Object.keys(before), ...Object.keys(after)])].filter((path) => before[path] !== after[path]).sort();
  /** What must not change: the working tree with its .git, the directory outside, the canaries. */
  const world = () => ({ repo: treeFingerprint(repo.root), outside: treeFingerprint(repo.outside), canaries: repo.canaries.filter((c) => existsSync(c)) });

  describe.each(CONFINED)('$agent in mode $mode', ({ agent, mode, tools }) => {
    it('is offered read-only tools, refuses every hostile call in every dialect, changes nothing, and still reads', async () => {
      await boot();
      const before = world();
      expect(before.canaries).toEqual([]);
      const hostile = hostileNativeCalls(places);
      const benign = benignCalls(places);
      const turns = [
        ...chunks(hostile, PER_ANSWER).map((calls) => scripted.toolCalls(...calls)),
        ...TEXT_FORMS.map((form) => scripted.textToolCalls(form, hostileTextCalls(places), { before: readAsText(places) })),
        scripted.toolCalls(...benign.map((b) => b.call)),
        scripted.text('Nothing to change.'),
      ];
      model.push(...turns);
      const ended = await run({ agent_type: agent, mode });
      expect(ended.status).toBe('succeeded');
      expect(model.requests).toHaveLength(turns.length);
      for (const request of model.requests) expect(request.tools.map((tool) => tool.name).sort()).toEqual(tools);

      const after = world();
      // Named first, so that a failure says which paths changed, not only that the trees differ.
      expect(changedPaths(before.repo, after.repo)).toEqual([]);
      expect(changedPaths(before.outside, after.outside)).toEqual([]);
      expect(after).toEqual(before);
      const results = toolResults(model.requests.at(-1));
      expect(results).toHaveLength(hostile.length + TEXT_FORMS.length + benign.length);
      const offered = new Set(tools);
      hostile.forEach((call, i) => {
        if (!offered.has(call.name)) expect(results[i], call.name).toMatch(/^Error: Unknown tool '/);
      });
      // Text calls: in every dialect only the read was recognised and run.
      const textResults = results.slice(hostile.length, hostile.length + TEXT_FORMS.length);
      for (const result of textResults) expect(result).toContain('gamma');
      const benignResults = results.slice(hostile.length + TEXT_FORMS.length);
      benign.forEach((b, i) => expect(benignResults[i], JSON.stringify(b.call)).toContain(b.expect));
    });
  });

  it('keeps a read-only run read-only under the command policy alone (SANDBOX_ENABLED=false)', async () => {
    // Without the sandbox a clean filter still runs on `git status` (see the sandbox README): the
    // repository here plants every other program git could be made to start.
    await boot({ SANDBOX_ENABLED: 'false' }, { filters: false });
    const before = world();
    const hostile = hostileNativeCalls(places).filter((call) => call.name === 'bash_readonly');
    model.push(...chunks(hostile, PER_ANSWER).map((calls) => scripted.toolCalls(...calls)), scripted.text('done'));
    expect((await run({ agent_type: 'plan', mode: 'plan' })).status).toBe('succeeded');
    expect(world()).toEqual(before);
  });

  it.each(['true', 'false'])('never fetches the missing objects of a partial clone from bash_readonly (SANDBOX_ENABLED=%s)', async (sandbox) => {
    await boot({ SANDBOX_ENABLED: sandbox });
    const clone = createPartialClone(join(t.workdir, 'clone'), join(scratch, 'remote'));
    const before = { clone: treeFingerprint(clone.root), remote: treeFingerprint(clone.outside) };
    const commands = ['git show HEAD:a.txt', 'git log -p', 'git diff HEAD~0 --stat', 'git status'];
    model.push(scripted.toolCalls(...commands.map((command) => ({ name: 'bash_readonly', arguments: { command } }))), scripted.text('done'));
    expect((await run({ agent_type: 'explore', mode: 'plan', working_dir: clone.root })).status).toBe('succeeded');
    expect(clone.canaries.filter((c) => existsSync(c))).toEqual([]);
    expect({ clone: treeFingerprint(clone.root), remote: treeFingerprint(clone.outside) }).toEqual(before);
  });

  describe('approval rules in mode plan', () => {
    const DENIED = /^Error: read_file refused by approval rule /;
    async function bootWithRules(): Promise<void> {
      const rules = join(scratch, 'rules.json');
      writeFileSync(
        rules,
        JSON.stringify({
          rules: [
            { tool: 'read_file', match: '/**/secret/**', action: 'deny' },
            { tool: 'grep_content', match: '/**/secret/**', action: 'deny' },
            { tool: 'read_file', match: '/**/asked.txt', action: 'ask' },
          ],
        }),
      );
      await boot({ APPROVAL_RULES_FILE: rules });
    }
    const read = (file: string): ScriptedToolCall => ({ name: 'read_file', arguments: { file_path: join(repo.root, file) } });

    it.each(['explore', 'plan'])('refuse what the operator denied: %s in mode plan reads no more than in mode default', async (agent) => {
      await bootWithRules();
      for (const mode of ['default', 'plan']) {
        model.push(scripted.toolCalls(read('secret/key.txt'), { name: 'grep_content', arguments: { pattern: 'operator', path: join(repo.root, 'secret', 'key.txt') } }), scripted.text('done'));
        expect((await run({ agent_type: agent, mode })).status).toBe('succeeded');
        const [readResult, grepResult] = toolResults(model.requests.at(-1));
        expect(readResult, mode).toMatch(DENIED);
        expect(grepResult, mode).toMatch(/^Error: grep_content refused by approval rule /);
      }
    });

    it('reach a sub-agent that a task in mode plan starts', async () => {
      await bootWithRules();
      model.push(scripted.toolCalls({ name: 'spawn_agent', arguments: { agent_type: 'explore', prompt: 'read the key' } }), scripted.toolCalls(read('secret/key.txt')), scripted.text('sub done'), scripted.text('done'));
      expect((await run({ agent_type: 'task', mode: 'plan' })).status).toBe('succeeded');
      expect(toolResults(model.requests[2])).toEqual([expect.stringMatching(DENIED)]);
    });

    it('ask the run\'s user in mode plan too, from a sub-agent as well, and refuse at once where nobody can answer', async () => {
      await bootWithRules();
      model.push(scripted.toolCalls({ name: 'spawn_agent', arguments: { agent_type: 'plan', prompt: 'read it' } }), scripted.toolCalls(read('asked.txt')), scripted.text('sub done'), scripted.text('done'));
      const response = await post('/runs', { agent_type: 'task', mode: 'plan', prompt: 'go', working_dir: repo.root });
      const id = ((await response.json()) as { id: string }).id;
      const pending = await until(() => getJson('/approvals?status=pending'), (list) => (list.approvals as Json[]).length > 0, 'a pending approval');
      const approval = (pending.approvals as Json[])[0]!;
      expect(approval).toMatchObject({ run_id: id, tool: 'read_file' });
      expect((await post(`/approvals/${approval.id as string}`, { decision: 'deny', message: 'not in plan mode' })).status).toBe(200);
      expect((await ended(id)).status).toBe('succeeded');
      expect(toolResults(model.requests[2])).toEqual(['Denied by the user: not in plan mode']);

      const asked = model.requests.length;
      model.push(scripted.toolCalls({ name: 'spawn_agent', arguments: { agent_type: 'explore', prompt: 'read it' } }), scripted.toolCalls(read('asked.txt')), scripted.text('sub done'), scripted.text('done'));
      const blocking = await post('/agents/run', { agent_type: 'task', mode: 'plan', prompt: 'go', working_dir: repo.root });
      expect(((await blocking.json()) as Json).success).toBe(true);
      expect(toolResults(model.requests[asked + 2])).toEqual(['Needs approval, and this run cannot wait for it (on_ask=deny)']);
    });
  });

  describe('mode per turn and per run', () => {
    const write = (name: string): ScriptedToolCall => ({ name: 'write_file', arguments: { file_path: join(repo.root, name), content: 'written\n' } });
    const offered = (request: RecordedRequest | undefined) => request?.tools.map((tool) => tool.name).sort();

    it('gives each conversation turn the tools of its own mode: a plan turn after an auto_accept one changes nothing', async () => {
      await boot();
      const created = await post('/conversations/', { agent_type: 'task', working_dir: repo.root });
      const conversation = ((await created.json()) as { id: string }).id;
      const turn = async (mode: string) => {
        const response = await post(`/conversations/${conversation}/runs`, { content: `turn in ${mode}`, mode, on_ask: 'deny' });
        expect(response.status).toBe(202);
        return ended(((await response.json()) as { id: string }).id);
      };

      model.push(scripted.toolCalls(write('first.txt')), scripted.text('wrote it'));
      expect((await turn('auto_accept')).status).toBe('succeeded');
      expect(existsSync(join(repo.root, 'first.txt'))).toBe(true);
      expect(offered(model.requests[0])).toContain('write_file');

      const before = world();
      const from = model.requests.length;
      model.push(scripted.toolCalls(write('second.txt'), { name: 'bash', arguments: { command: 'rm first.txt' } }), scripted.text('could not'));
      expect((await turn('plan')).status).toBe('succeeded');
      expect(world()).toEqual(before);
      expect(offered(model.requests[from])).toEqual([...READ_ONLY, 'spawn_agent'].sort());
      expect(toolResults(model.requests[from + 1])).toEqual([expect.stringMatching(/^Error: Unknown tool 'write_file'/), expect.stringMatching(/^Error: Unknown tool 'bash'/)]);

      // Mode default asks before rm; with on_ask=deny nobody can say yes.
      model.push(scripted.toolCalls({ name: 'bash', arguments: { command: 'rm first.txt' } }), scripted.text('asked'));
      expect((await turn('default')).status).toBe('succeeded');
      expect(existsSync(join(repo.root, 'first.txt'))).toBe(true);
      expect(toolResults(model.requests.at(-1))).toEqual(['Needs approval, and this run cannot wait for it (on_ask=deny)']);
    });

    it.each([
      [{ agent_type: 'Task' }, 400],
      [{ agent_type: 'task ' }, 400],
      [{ agent_type: 't\u0430sk' }, 400],
      [{ agent_type: '__proto__' }, 400],
      [{ mode: 'Plan' }, 422],
      [{ mode: 'auto-accept' }, 422],
      [{ mode: 'plan\u200b' }, 422],
      [{ mode: 'bypass' }, 422],
    ])('refuses a run for %j before anything starts (%i)', async (override, status) => {
      await boot();
      const response = await post('/runs', { agent_type: 'explore', prompt: 'go', working_dir: repo.root, mode: 'plan', ...override });
      expect(response.status).toBe(status);
      expect(((await getJson('/runs')) as { total: number }).total).toBe(0);
      expect(model.requests).toHaveLength(0);
    });

    it('does not let an Idempotency-Key replay a run under another mode', async () => {
      await boot();
      model.push(scripted.text('planned'));
      const body = { agent_type: 'task', prompt: 'plan it', working_dir: repo.root, mode: 'plan' };
      const first = await fetch(`${address}/runs`, { method: 'POST', headers: { 'content-type': 'application/json', 'idempotency-key': 'k1' }, body: JSON.stringify(body) });
      expect(first.status).toBe(202);
      const again = await fetch(`${address}/runs`, { method: 'POST', headers: { 'content-type': 'application/json', 'idempotency-key': 'k1' }, body: JSON.stringify({ ...body, mode: 'auto_accept' }) });
      expect(again.status).toBe(422);
      expect(await again.json()).toEqual({ detail: 'Idempotency-Key reused with a different request' });
    });

    it('takes no checkpoint for a run in mode plan, and undoes a task\'s changes, its sub-agent\'s attempts included', async () => {
      await boot();
      model.push(scripted.toolCalls({ name: 'bash_readonly', arguments: { command: 'git status' } }), scripted.text('looked'));
      const planned = await run({ agent_type: 'task', mode: 'plan' });
      const changes = await fetch(`${address}/runs/${planned.id as string}/changes`);
      expect(changes.status).toBe(409);
      expect(await changes.json()).toEqual({ detail: 'No checkpoint for this run' });

      const before = treeFingerprint(repo.root, { contentOnly: true });
      const hostile = hostileNativeCalls(places).slice(0, PER_ANSWER);
      model.push(
        scripted.toolCalls({ name: 'spawn_agent', arguments: { agent_type: 'explore', prompt: 'break things' } }),
        scripted.toolCalls(...hostile),
        scripted.text('sub done'),
        scripted.toolCalls(write('added.txt'), { name: 'bash', arguments: { command: 'echo more >> notes.txt' } }),
        scripted.text('done'),
      );
      const worked = await run({ agent_type: 'task', mode: 'auto_accept' });
      expect(worked.status).toBe('succeeded');
      const listed = (await getJson(`/runs/${worked.id as string}/changes`)) as { files: { path: string; change: string }[] };
      expect(listed.files.map((f) => [f.path, f.change])).toEqual([['added.txt', 'added'], ['notes.txt', 'modified']]);
      const reverted = await post(`/runs/${worked.id as string}/revert`, {});
      expect(reverted.status).toBe(200);
      expect(treeFingerprint(repo.root, { contentOnly: true })).toEqual(before);
    });
  });

  describe('spawn_agent', () => {
    const spawn = (args: Json): ScriptedToolCall => ({ name: 'spawn_agent', arguments: { prompt: 'look around', ...args } });

    it('starts only explore and plan, and only in a working directory inside the allowed paths', async () => {
      await boot();
      const dirs = ['../..', '../data', 'outside-link', 'outside-link/..', '/', '/proc', '/tmp', repo.outside, `${repo.root}/outside-link`, t.settings.dataDir, `${repo.root}/../..`, `${repo.root}/missing`];
      const types = ['task', 'Task', 'TASK', ' explore', 'explore ', 'expl\u043ere', 'Explore', 'plan\u200b', 'general-purpose'];
      const calls = [...dirs.map((dir) => spawn({ agent_type: 'explore', working_dir: dir })), ...types.map((type) => spawn({ agent_type: type }))];
      model.push(scripted.toolCalls(...calls), scripted.text('done'));
      const before = world();
      expect((await run({ agent_type: 'task', mode: 'plan' })).status).toBe('succeeded');
      // No sub-agent ran: the only requests are the parent's two.
      expect(model.requests).toHaveLength(2);
      const results = toolResults(model.requests[1]);
      dirs.forEach((dir, i) => expect(results[i], dir).toMatch(/^Sub-agent error: Working directory not allowed: /));
      expect(results.slice(dirs.length)).toEqual(
        types.map((type) =>
          type === 'task' ? 'Error: Cannot spawn nested Task agents (recursion risk)' : `Error: Unknown agent type '${type}'. Allowed: ['explore', 'plan']`,
        ),
      );
      expect(world()).toEqual(before);
    });

    it('runs the sub-agent in the directory named relative to the parent\'s, not to the service\'s start directory', async () => {
      await boot();
      model.push(scripted.toolCalls(spawn({ agent_type: 'explore', working_dir: 'src' })), scripted.text('sub done'), scripted.text('done'));
      expect((await run({ agent_type: 'task', mode: 'plan' })).status).toBe('succeeded');
      expect(model.requests[1]?.messages[0]?.content).toContain(join(repo.root, 'src'));
    });

    it('gives a sub-agent read-only tools whatever the parent\'s mode, no spawn_agent, and its attempts change nothing', async () => {
      await boot();
      const hostile = [spawn({ agent_type: 'explore' }), spawn({ agent_type: 'task' }), ...hostileNativeCalls(places).slice(0, PER_ANSWER - 2)];
      const before = world();
      model.push(scripted.toolCalls(spawn({ agent_type: 'plan' })), scripted.toolCalls(...hostile), scripted.text('sub done'), scripted.text('done'));
      expect((await run({ agent_type: 'task', mode: 'auto_accept' })).status).toBe('succeeded');
      // Depth one: the sub-agent's own spawns are unknown tools, and no third agent ever asked the model.
      expect(model.requests).toHaveLength(4);
      expect(model.requests[1]?.tools.map((tool) => tool.name).sort()).toEqual(READ_ONLY);
      expect(toolResults(model.requests[2]).slice(0, 2)).toEqual([expect.stringMatching(/^Error: Unknown tool 'spawn_agent'/), expect.stringMatching(/^Error: Unknown tool 'spawn_agent'/)]);
      expect(world()).toEqual(before);
    });

    it('counts every model call of its sub-agents against AGENT_MAX_STEPS: recursion cannot multiply a run\'s cost', async () => {
      await boot({ AGENT_MAX_STEPS: '5' });
      const spawns = Array.from({ length: PER_ANSWER }, () => spawn({ agent_type: 'explore' }));
      const read = { name: 'read_file', arguments: { file_path: `${repo.root}/notes.txt` } };
      // The parent spawns as many as it may at every step; every sub-agent reads forever.
      for (let i = 0; i < 200; i++) model.push((request) => (request.tools.some((tool) => tool.name === 'spawn_agent') ? scripted.toolCalls(...spawns) : scripted.toolCalls(read)));
      const ended = await run({ agent_type: 'task', mode: 'default' });
      expect(ended.status).toBe('failed');
      expect(ended.error).toBe('Stopped after 5 model calls without a final answer (AGENT_MAX_STEPS=5)');
      expect(model.requests).toHaveLength(5);
      expect((ended.usage as Json).model_calls).toBe(5);
    });
  });
});
