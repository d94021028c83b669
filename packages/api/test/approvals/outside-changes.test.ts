import { execFileSync } from 'node:child_process';
import { existsSync, linkSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { scripted, startScriptedModel, type ScriptedModel } from '@mada/testkit';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../support/app.js';
import { DIALECTS } from '../support/databases.js';
import { readRunEvents } from '../support/run-events.js';
import { until } from '../support/until.js';
import { tempDir } from '../../../../test/helpers/temp-dirs.js';

const KEY = 'ann-key-0123456789';
const HEADERS = { 'x-api-key': KEY, 'content-type': 'application/json' };
const ENDED = new Set(['succeeded', 'failed', 'cancelled', 'interrupted']);
const CANNOT_WAIT = 'Needs approval, and this run cannot wait for it (on_ask=deny)';
const ORIGINAL = 'original\n';

type Json = Record<string, unknown>;
type Call = { name: string; arguments: Json };

const bash = (command: string, cwd?: string): Call => ({ name: 'bash', arguments: cwd === undefined ? { command } : { command, cwd } });
const writeFile = (path: string): Call => ({ name: 'write_file', arguments: { file_path: path, content: 'evil\n' } });
const editFile = (path: string): Call => ({ name: 'edit_file', arguments: { file_path: path, old_string: 'original', new_string: 'evil' } });

/**
 * A run checkpoints its working directory only (EXTENSIONS.md section 4), so in a mode that asks,
 * a call that may change a file outside it asks first: reverting the run would not undo it. Runs
 * work in `a`; `b` is another project inside the allowed paths, `a/link` a symbolic link to it.
 */
describe.each(DIALECTS)('changes outside the working directory on %s', (dialect) => {
  let model: ScriptedModel;
  let t: TestApp;
  let address: string;

  async function boot(env: Record<string, string> = {}): Promise<void> {
    t = await createTestApp({ dialect, model: { url: model.url }, env: { API_KEYS: `ann:${KEY}`, RATE_LIMIT_PER_MINUTE: '0', ...env } });
    address = await t.app.listen({ port: 0, host: '127.0.0.1' });
    mkdirSync(path('a', 'sub'), { recursive: true });
    mkdirSync(path('b', 'src'), { recursive: true });
    for (const name of ['a/x.txt', 'a/sub/y.txt', 'b/x.txt', 'b/src/x.ts']) writeFileSync(path(name), ORIGINAL);
    symlinkSync('../b', path('a', 'link'));
    execFileSync('tar', ['-cf', path('a', 'arch.tar'), '-C', path('a'), 'x.txt']);
  }

  beforeEach(async () => {
    model = await startScriptedModel();
    await boot();
  });
  afterEach(async () => {
    await t.close();
    await model.close();
  });

  const path = (...parts: string[]) => join(t.workdir, ...parts);
  const post = (route: string, body: unknown) => fetch(`${address}${route}`, { method: 'POST', headers: HEADERS, body: JSON.stringify(body) });
  const getJson = async (route: string) => (await (await fetch(`${address}${route}`, { headers: HEADERS })).json()) as Json;
  const startRun = async (body: Json): Promise<string> => {
    const response = await post('/runs', { agent_type: 'task', prompt: 'do it', working_dir: 'a', ...body });
    expect(response.status).toBe(202);
    return ((await response.json()) as { id: string }).id;
  };
  const ended = (id: string) => until(() => getJson(`/runs/${id}`), (run) => ENDED.has(run.status as string), `run ${id} to end`);
  const pending = () => until(() => getJson('/approvals?status=pending'), (list) => (list.approvals as Json[]).length > 0, 'a pending approval');
  const git = (dir: string, ...args: string[]) => execFileSync('git', ['-C', dir, '-c', 'user.name=t', '-c', 'user.email=t@t', ...args], { encoding: 'utf8' });
  const commitAll = (dir: string) => {
    git(dir, 'init', '-q', '-b', 'main');
    git(dir, 'add', '.');
    git(dir, 'commit', '-qm', 'base');
  };
  const unchanged = () => {
    for (const name of ['b/x.txt', 'b/src/x.ts']) expect(readFileSync(path(name), 'utf8'), name).toBe(ORIGINAL);
    expect(existsSync(path('b', 'new'))).toBe(false);
  };

  /** What one call answers in a run of `a` that cannot wait: CANNOT_WAIT when it asked. */
  async function resultOf(call: Call, body: Json = {}): Promise<string> {
    model.push(scripted.toolCalls(call), scripted.text('done'));
    const id = await startRun({ on_ask: 'deny', ...body });
    expect((await ended(id)).status).toBe('succeeded');
    return model.requests.at(-1)?.messages.filter((m) => m.role === 'tool').at(-1)?.content as string;
  }

  it('asks before a file tool or a command changes a file outside the working directory, however it is named', async () => {
    commitAll(path('b'));
    const asking: Call[] = [
      writeFile('../b/src/x.ts'),
      writeFile('link/src/x.ts'),
      writeFile(path('b', 'x.txt')),
      editFile('../b/src/x.ts'),
      editFile('link/x.txt'),
      bash('echo evil > ../b/x.txt'),
      bash('echo evil >> link/x.txt'),
      bash('echo inside > sub/out.txt && echo evil > ../b/x.txt'),
      bash('cp x.txt ../b/src/x.ts'),
      bash('cp x.txt link/'),
      bash('mv sub/y.txt ../b/new'),
      bash('touch ../b/new'),
      bash('touch ../b/*.txt'),
      bash(`mkdir ${path('b', 'new')}`),
      bash('chmod 600 ../b/x.txt'),
      bash('sed -i s/original/evil/ ../b/x.txt'),
      bash('sort -o ../b/x.txt x.txt'),
      bash('tar -xf arch.tar -C ../b'),
      bash('touch new', '../b'),
      bash('echo evil > x.txt', 'link'),
      bash('git checkout .', '../b'),
      bash('git stash', '../b'),
      // It runs code there, which could change anything in it.
      bash('make', '../b'),
    ];
    for (const call of asking) expect(await resultOf(call), JSON.stringify(call)).toBe(CANNOT_WAIT);
    unchanged();
    expect(existsSync(path('a', 'sub', 'out.txt'))).toBe(false);
    expect(existsSync(path('a', 'sub', 'y.txt'))).toBe(true);
  });

  it('does not ask for changes inside the working directory, nor for reading outside it', async () => {
    commitAll(path('b'));
    git(path('b'), 'worktree', 'add', '-q', path('linked'));
    const quiet: Call[] = [
      writeFile('sub/new.txt'),
      editFile('x.txt'),
      bash('echo hi > sub/out.txt 2>/dev/null'),
      bash('cp ../b/x.txt copied.txt'),
      bash('cp link/x.txt sub/'),
      bash('touch sub/*.txt && mkdir -p made/deeper'),
      bash('cat ../b/x.txt'),
      bash('ls ..'),
      bash('grep -r original ../b'),
      bash('find ../b -name x.txt'),
      bash('sed -n p link/x.txt'),
      bash('wc -l ../b/x.txt | sort'),
      bash('git log --oneline', '../b'),
      bash('git status', '../linked'),
      bash('git status', '../b'),
      // It records in b's git directory, which no checkpoint holds, and changes no file of b's.
      bash('git add .', '../b'),
      bash('git diff --no-index x.txt ../b/x.txt'),
      bash('ls', '..'),
      bash('node --version'),
      { name: 'bash_readonly', arguments: { command: 'cat ../b/x.txt' } },
      { name: 'glob_files', arguments: { pattern: '*.txt', path: path('b') } },
    ];
    for (const call of quiet) expect(await resultOf(call), JSON.stringify(call)).not.toBe(CANNOT_WAIT);
    // Its sub-agents only read (explore and plan have no tool that changes files), wherever they work.
    const spawn = { name: 'spawn_agent', arguments: { agent_type: 'explore', prompt: 'look', working_dir: '../b' } };
    model.push(scripted.toolCalls(spawn), scripted.text('looked'), scripted.text('done'));
    expect((await ended(await startRun({ on_ask: 'deny' }))).status).toBe('succeeded');
    expect(model.requests.at(-1)?.messages.filter((m) => m.role === 'tool').at(-1)?.content).toBe('looked');
    unchanged();
    expect(readFileSync(path('a', 'x.txt'), 'utf8')).toBe('evil\n');
    expect(existsSync(path('a', 'sub', 'new.txt'))).toBe(true);
    expect(existsSync(path('a', 'made', 'deeper'))).toBe(true);
    expect((await getJson('/approvals')).total).toBe(0);
  });

  it('pauses for the user with a reason, writes outside once approved, and leaves the file alone when denied', async () => {
    model.push(scripted.toolCalls(writeFile('../b/src/x.ts')), scripted.text('wrote it'));
    const approved = await startRun({});
    const following = readRunEvents(address, approved, { headers: HEADERS });
    const first = ((await pending()).approvals as Json[])[0]!;
    expect(first).toMatchObject({ run_id: approved, tool: 'write_file', args: { file_path: '../b/src/x.ts' }, status: 'pending' });
    expect(first.reason).toBe(`write_file changes ${path('b', 'src', 'x.ts')}, outside the run's working directory ${path('a')}: reverting this run will not undo it`);
    expect((await getJson(`/runs/${approved}`)).status).toBe('waiting_approval');
    expect(readFileSync(path('b', 'src', 'x.ts'), 'utf8')).toBe(ORIGINAL);
    expect((await post(`/approvals/${first.id as string}`, { decision: 'approve' })).status).toBe(200);
    expect((await ended(approved)).status).toBe('succeeded');
    expect(readFileSync(path('b', 'src', 'x.ts'), 'utf8')).toBe('evil\n');
    const requested = (await following).frames.map((f) => JSON.parse(f.data) as Json).find((e) => e.event === 'approval_requested');
    expect(requested).toMatchObject({ approval_id: first.id, tool: 'write_file', reason: first.reason });

    // A rule's ask and the outside ask together: both reasons, and a denial changes nothing.
    model.push(scripted.toolCalls(bash('rm ../b/x.txt')), scripted.text('left it'));
    const denied = await startRun({});
    const second = ((await pending()).approvals as Json[])[0]!;
    expect(second.reason).toContain('approval rule bash "rm" (ask)');
    expect(second.reason).toContain(`rm changes ${path('b', 'x.txt')}, outside the run's working directory`);
    expect((await post(`/approvals/${second.id as string}`, { decision: 'deny', message: 'not there' })).status).toBe(200);
    expect((await ended(denied)).status).toBe('succeeded');
    expect(model.requests.at(-1)?.messages.filter((m) => m.role === 'tool').at(-1)?.content).toBe('Denied by the user: not there');
    expect(readFileSync(path('b', 'x.txt'), 'utf8')).toBe(ORIGINAL);
  });

  it('grants no standing approval for changing outside: approve_always approves the one call', async () => {
    model.push(scripted.toolCalls(bash('touch ../b/new')), scripted.text('done'));
    const id = await startRun({});
    const approval = ((await pending()).approvals as Json[])[0]!;
    expect((await post(`/approvals/${approval.id as string}`, { decision: 'approve_always' })).status).toBe(200);
    expect((await ended(id)).status).toBe('succeeded');
    expect(existsSync(path('b', 'new'))).toBe(true);
    expect(await resultOf(bash('touch ../b/other'))).toBe(CANNOT_WAIT);
    expect(await resultOf(bash('touch ../b/new'))).toBe(CANNOT_WAIT);
  });

  it('asks before writing into a file that has another name (a hard link) the checkpoint does not hold', async () => {
    linkSync(path('b', 'x.txt'), path('a', 'other-name.txt'));
    for (const call of [writeFile('other-name.txt'), editFile('other-name.txt'), bash('echo evil > other-name.txt'), bash('cp x.txt other-name.txt')]) {
      expect(await resultOf(call), JSON.stringify(call)).toBe(CANNOT_WAIT);
    }
    // Made by an earlier command of the call: the write is checked again just before it starts.
    const made = await resultOf(bash('cp --link ../b/src/x.ts made.ts && echo evil >> made.ts'));
    expect(made).toContain('Command not allowed: echo now changes paths it cannot name');
    unchanged();
  });

  it('asks before an extraction or a copy into a directory where a symbolic link leads outside', async () => {
    // tar and unzip write a member `link/x.txt` through the link `link` already there, into `b`.
    const members = path('members');
    mkdirSync(join(members, 'link'), { recursive: true });
    writeFileSync(join(members, 'link', 'x.txt'), 'evil\n');
    execFileSync('tar', ['-cf', path('a', 'linked.tar'), '-C', members, 'link/x.txt']);
    execFileSync('zip', ['-q', path('a', 'linked.zip'), 'link/x.txt'], { cwd: members });
    symlinkSync('../../b/src/x.ts', path('a', 'sub', 'x.ts'));
    writeFileSync(path('a', 'x.ts'), 'evil\n');
    for (const call of [bash('tar -xf linked.tar'), bash('tar -xf linked.tar -C .'), bash('unzip -o linked.zip'), bash('cp x.ts sub/'), bash('cp -t sub x.ts')]) {
      expect(await resultOf(call), JSON.stringify(call)).toBe(CANNOT_WAIT);
    }
    unchanged();
    // Where no link leads out, they run.
    mkdirSync(path('a', 'plain'));
    expect(await resultOf(bash('tar -xf linked.tar -C plain'))).not.toBe(CANNOT_WAIT);
    expect(await resultOf(bash('cp x.txt sub/'))).not.toBe(CANNOT_WAIT);
    expect(readFileSync(path('a', 'plain', 'link', 'x.txt'), 'utf8')).toBe('evil\n');
  });

  it('lets an operator\'s allow rule that names the call change outside without asking', async () => {
    const rulesFile = join(tempDir('mada-rules-'), 'rules.json');
    writeFileSync(rulesFile, JSON.stringify({ rules: [{ tool: 'write_file', match: '/**/b/src/**', action: 'allow' }] }));
    await t.close();
    await boot({ APPROVAL_RULES_FILE: rulesFile });
    expect(await resultOf(writeFile('../b/src/x.ts'))).toBe(`Overwrote ${path('b', 'src', 'x.ts')} (5 bytes, 1 lines)`);
    expect(await resultOf(writeFile('../b/x.txt'))).toBe(CANNOT_WAIT);
    expect(await resultOf(bash('echo evil > ../b/src/x.ts'))).toBe(CANNOT_WAIT);
    expect(readFileSync(path('b', 'x.txt'), 'utf8')).toBe(ORIGINAL);
  });

  it('runs outside changes without asking in auto_accept', async () => {
    expect(await resultOf(writeFile('../b/x.txt'), { mode: 'auto_accept' })).not.toBe(CANNOT_WAIT);
    expect(await resultOf(bash('touch ../b/new'), { mode: 'auto_accept' })).toBe('(no output)');
    expect(readFileSync(path('b', 'x.txt'), 'utf8')).toBe('evil\n');
    expect(existsSync(path('b', 'new'))).toBe(true);
  });

  it('asks for git that changes the work tree of a repository larger than the working directory, not for git that reads or records in it', async () => {
    git(t.workdir, 'init', '-q', '-b', 'main');
    git(t.workdir, 'config', 'user.name', 'agent');
    git(t.workdir, 'config', 'user.email', 'agent@example.com');
    git(t.workdir, 'add', 'a/x.txt', 'b/x.txt');
    git(t.workdir, 'commit', '-qm', 'base');
    expect(await resultOf(bash('git status'))).not.toBe(CANNOT_WAIT);
    expect(await resultOf(bash('git log --oneline'))).not.toBe(CANNOT_WAIT);
    expect(await resultOf(bash('git branch --list'))).not.toBe(CANNOT_WAIT);
    expect(await resultOf(bash('git ls-files'))).not.toBe(CANNOT_WAIT);
    // A package of a monorepo commits as its root would: the git directory is in no checkpoint.
    writeFileSync(path('a', 'x.txt'), 'changed in a\n');
    expect(await resultOf(bash('git add x.txt'))).not.toBe(CANNOT_WAIT);
    expect(await resultOf(bash('git commit -qm change'))).toBe('(no output)');
    expect(await resultOf(bash('git branch topic'))).not.toBe(CANNOT_WAIT);
    expect(git(t.workdir, 'log', '--format=%s').trim().split('\n')).toEqual(['change', 'base']);
    // A stash takes back changes everywhere in the work tree, b's included.
    writeFileSync(path('b', 'x.txt'), 'changed in b\n');
    expect(await resultOf(bash('git stash'))).toBe(CANNOT_WAIT);
    expect(readFileSync(path('b', 'x.txt'), 'utf8')).toBe('changed in b\n');
  });

  it('stops a command that an earlier command of the same call pointed outside the working directory', async () => {
    git(path('a'), 'init', '-q', '-b', 'main');
    git(path('a'), 'commit', '-q', '--allow-empty', '-m', 'base');
    git(path('a'), 'switch', '-qc', 'evil');
    symlinkSync('../b', path('a', 'escape'));
    git(path('a'), 'add', 'escape');
    git(path('a'), 'commit', '-qm', 'a link out');
    git(path('a'), 'switch', '-q', 'main');

    // When the call is judged `escape` does not exist yet, so `escape/new` lies inside `a`.
    const result = await resultOf(bash('git checkout -q evil && touch escape/new'));
    expect(existsSync(path('a', 'escape'))).toBe(true);
    expect(existsSync(path('b', 'new'))).toBe(false);
    expect(result).toContain(`Command not allowed: touch now changes ${path('b', 'new')}, outside ${path('a')}`);
  });
});
