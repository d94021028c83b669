import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { scripted, startScriptedModel, type ScriptedModel } from '@mada/testkit';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../support/app.js';
import { DIALECTS } from '../support/databases.js';
import { until } from '../support/until.js';
import { tempDir } from '../../../../test/helpers/temp-dirs.js';

const KEY = 'ann-key-0123456789';
const HEADERS = { 'x-api-key': KEY, 'content-type': 'application/json' };
const ENDED = new Set(['succeeded', 'failed', 'cancelled', 'interrupted']);
const CANNOT_WAIT = 'Needs approval, and this run cannot wait for it (on_ask=deny)';

/** `rm` asks as by default; `echo` and writing files ask too, so a grant for them can be tried on other paths. */
const RULES = {
  rules: [
    { tool: 'bash', match: 'rm', action: 'ask' },
    { tool: 'bash', match: 'echo', action: 'ask' },
    { tool: 'bash', match: 'git clean', action: 'ask' },
    { tool: 'write_file', action: 'ask' },
  ],
};

type Json = Record<string, unknown>;
type Call = { name: string; arguments: Json };

/**
 * An approve_always grant covers the working directory it was given in (EXTENSIONS.md section 3):
 * a later call in that directory that acts on anything outside it asks again.
 */
describe.each(DIALECTS)('approve_always grants stay inside their working directory on %s', (dialect) => {
  let model: ScriptedModel;
  let t: TestApp;
  let address: string;

  beforeEach(async () => {
    model = await startScriptedModel();
    const rulesFile = join(tempDir('mada-rules-'), 'rules.json');
    writeFileSync(rulesFile, JSON.stringify(RULES));
    t = await createTestApp({ dialect, model: { url: model.url }, env: { API_KEYS: `ann:${KEY}`, RATE_LIMIT_PER_MINUTE: '0', APPROVAL_RULES_FILE: rulesFile } });
    address = await t.app.listen({ port: 0, host: '127.0.0.1' });
  });
  afterEach(async () => {
    await t.close();
    await model.close();
  });

  const post = (path: string, body: unknown) => fetch(`${address}${path}`, { method: 'POST', headers: HEADERS, body: JSON.stringify(body) });
  const getJson = async (path: string) => (await (await fetch(`${address}${path}`, { headers: HEADERS })).json()) as Json;
  const startRun = async (body: Json): Promise<string> => {
    const response = await post('/runs', { agent_type: 'task', prompt: 'do it', working_dir: 'a', ...body });
    expect(response.status).toBe(202);
    return ((await response.json()) as { id: string }).id;
  };
  const ended = (id: string) => until(() => getJson(`/runs/${id}`), (run) => ENDED.has(run.status as string), `run ${id} to end`);
  const bash = (command: string, cwd?: string): Call => ({ name: 'bash', arguments: cwd === undefined ? { command } : { command, cwd } });
  const writeFile = (path: string): Call => ({ name: 'write_file', arguments: { file_path: path, content: 'x' } });
  const path = (...parts: string[]) => join(t.workdir, ...parts);

  /** One run in `a` that makes each call and gets approve_always for each. */
  async function grant(...calls: Call[]): Promise<void> {
    model.push(...calls.map((call) => scripted.toolCalls(call)), scripted.text('granted'));
    const id = await startRun({});
    const decided = new Set<string>();
    for (let i = 0; i < calls.length; i++) {
      const list = await until(() => getJson('/approvals?status=pending'), (l) => (l.approvals as Json[]).some((a) => !decided.has(a.id as string)), 'an approval');
      const approval = (list.approvals as Json[]).find((a) => !decided.has(a.id as string))!;
      decided.add(approval.id as string);
      expect((await post(`/approvals/${approval.id as string}`, { decision: 'approve_always' })).status).toBe(200);
    }
    expect((await ended(id)).status).toBe('succeeded');
  }

  /** What one call answers in a run of `a` that cannot wait: CANNOT_WAIT when no grant covered it. */
  async function resultOf(call: Call): Promise<string> {
    model.push(scripted.toolCalls(call), scripted.text('done'));
    const id = await startRun({ on_ask: 'deny' });
    expect((await ended(id)).status).toBe('succeeded');
    // What the model read as the call's result, in full.
    return model.requests.at(-1)?.messages.filter((m) => m.role === 'tool').at(-1)?.content as string;
  }

  function layout(): void {
    mkdirSync(path('a', 'sub'), { recursive: true });
    mkdirSync(path('b'));
    for (const name of ['a/x.txt', 'a/sub/y.txt', 'a/z.txt', 'b/precious.txt', 'b/linked.txt', 'b/absolute.txt', 'b/cwd.txt']) writeFileSync(path(name), 'x');
    symlinkSync('../b', path('a', 'link'));
  }

  it('covers `rm` inside the directory, and asks for `rm` of what lies outside it however it is named', async () => {
    layout();
    await grant(bash('rm x.txt'), bash('echo granted > note.txt'), writeFile('first.txt'));
    expect(existsSync(path('a', 'x.txt'))).toBe(false);

    expect(await resultOf(bash('rm ../b/precious.txt'))).toBe(CANNOT_WAIT);
    expect(await resultOf(bash('rm link/linked.txt'))).toBe(CANNOT_WAIT);
    expect(await resultOf(bash(`rm ${path('b', 'absolute.txt')}`))).toBe(CANNOT_WAIT);
    expect(await resultOf(bash('rm cwd.txt', '../b'))).toBe(CANNOT_WAIT);
    expect(await resultOf(bash('rm z.txt && rm ../b/precious.txt'))).toBe(CANNOT_WAIT);
    expect(await resultOf(bash('echo escaped > ../b/out.txt'))).toBe(CANNOT_WAIT);
    expect(await resultOf(bash('echo escaped > link/out.txt'))).toBe(CANNOT_WAIT);
    expect(await resultOf(writeFile('../b/written.txt'))).toBe(CANNOT_WAIT);
    expect(await resultOf(writeFile('link/written.txt'))).toBe(CANNOT_WAIT);
    for (const name of ['precious.txt', 'linked.txt', 'absolute.txt', 'cwd.txt']) expect(existsSync(path('b', name))).toBe(true);
    for (const name of ['out.txt', 'written.txt']) expect(existsSync(path('b', name))).toBe(false);
    expect(existsSync(path('a', 'z.txt'))).toBe(true);

    // Inside `a`, by any spelling, the grants still answer without asking.
    expect(await resultOf(bash('rm sub/y.txt'))).not.toBe(CANNOT_WAIT);
    expect(await resultOf(bash(`rm ${path('a', 'z.txt')} 2>/dev/null`))).not.toBe(CANNOT_WAIT);
    expect(await resultOf(bash('echo kept > out.txt', 'sub'))).not.toBe(CANNOT_WAIT);
    expect(await resultOf(writeFile('sub/written.txt'))).not.toBe(CANNOT_WAIT);
    expect(existsSync(path('a', 'sub', 'y.txt'))).toBe(false);
    expect(existsSync(path('a', 'z.txt'))).toBe(false);
    expect(existsSync(path('a', 'sub', 'out.txt'))).toBe(true);
    expect(existsSync(path('a', 'sub', 'written.txt'))).toBe(true);
    expect((await getJson('/approvals')).total).toBe(3);
  });

  it('stops a granted command that an earlier command of the same call pointed outside the directory', async () => {
    layout();
    const git = (...args: string[]) => execFileSync('git', ['-C', path('a'), ...args], { encoding: 'utf8' });
    git('init', '-q', '-b', 'main');
    git('-c', 'user.name=t', '-c', 'user.email=t@t', 'commit', '-q', '--allow-empty', '-m', 'base');
    git('switch', '-qc', 'evil');
    symlinkSync('../b', path('a', 'escape'));
    git('add', 'escape');
    git('-c', 'user.name=t', '-c', 'user.email=t@t', 'commit', '-qm', 'a link out');
    git('switch', '-q', 'main');
    await grant(bash('rm x.txt'));

    // When the call is judged `escape` does not exist yet, so `escape/linked.txt` lies inside `a`.
    const result = await resultOf(bash('git checkout -q evil && rm escape/linked.txt'));
    expect(existsSync(path('a', 'escape'))).toBe(true);
    expect(existsSync(path('b', 'linked.txt'))).toBe(true);
    expect(result).toContain(`Command not allowed: rm now acts on ${path('b', 'linked.txt')}, outside ${path('a')}`);
  });

  it('asks again for git when the repository is larger than the directory', async () => {
    mkdirSync(path('a'));
    mkdirSync(path('.git'));
    await grant(bash('git clean -n'));
    // `git clean` in `a` of a repository rooted above it acts on the repository, not on `a` alone.
    expect(await resultOf(bash('git clean -n'))).toBe(CANNOT_WAIT);
  });
});
