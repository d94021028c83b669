import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { scripted, startScriptedModel, type ScriptedModel, type ScriptStep } from '@mada/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, startReplicas } from '../support/app.js';
import { TEST_DATABASE_URL } from '../support/databases.js';
import { until } from '../support/until.js';

/**
 * Workspaces (TEAMS.md section 9) with real bubblewrap: bob's runs act in his workspace only.
 * Every tool and bash command he tries against alice's workspace gets nothing, alice's files stay
 * as they were, and nothing bob's run stored carries her secret. On PostgreSQL the users are made
 * on one replica and bob works through the other.
 */

const ROOT_KEY = 'root-key-5d0a7c31e9b2';
/** In alice's files: a run of bob's whose results or stored events contain it has read them. */
const SECRET = 'alice-secret-3f9e1b07';
/** In ALLOWED_PATHS (the start directory): no longer bob's once he has a workspace of his own. */
const SHARED_SECRET = 'allowed-paths-secret-8c2d';
const NOTES = 'alice notes, as she left them\n';
const BOB_OWN = 'bob-own-file-7a1c';
type Json = Record<string, unknown>;

interface Service {
  /** Where the admin and alice call; bob calls `bobAddress` (the other replica on PostgreSQL). */
  address: string;
  bobAddress: string;
  /** The start directories (ALLOWED_PATHS) of the service's replicas. */
  startDirs: string[];
  close(): Promise<void>;
}

const SETUPS: { name: string; skip: boolean; start(env: Record<string, string>): Promise<Service> }[] = [
  {
    name: 'sqlite',
    skip: false,
    async start(env) {
      const t = await createTestApp({ dialect: 'sqlite', env });
      const address = await t.app.listen({ port: 0, host: '127.0.0.1' });
      return { address, bobAddress: address, startDirs: [t.workdir], close: () => t.close() };
    },
  },
  {
    name: 'postgres with two replicas',
    skip: !TEST_DATABASE_URL,
    async start(env) {
      const replicas = await startReplicas(env);
      return { address: replicas.addressA, bobAddress: replicas.addressB, startDirs: [replicas.a.workdir, replicas.b.workdir], close: () => replicas.close() };
    },
  },
];

async function call(address: string, key: string, method: string, path: string, body?: Json): Promise<{ status: number; body: Json; text: string }> {
  const response = await fetch(`${address}${path}`, {
    method,
    headers: { 'x-api-key': key, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await response.text();
  const json = response.headers.get('content-type')?.includes('json') && text !== '' ? (JSON.parse(text) as Json) : {};
  return { status: response.status, body: json, text };
}

/** Everything under `dir`, with each file's content: what "alice's files are unchanged" compares. */
function tree(dir: string): Record<string, string> {
  const files: Record<string, string> = {};
  for (const entry of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    const path = join(entry.parentPath, entry.name);
    files[path] = entry.isFile() ? readFileSync(path, 'base64') : entry.isDirectory() ? '<dir>' : '<other>';
  }
  return files;
}

const git = (cwd: string, ...args: string[]): string =>
  execFileSync('git', ['-c', 'user.name=alice', '-c', 'user.email=alice@example.test', ...args], { cwd, encoding: 'utf8' });

describe.each(SETUPS)('workspaces on $name', ({ skip, start }) => {
  let model: ScriptedModel;
  let service: Service;
  let base: string;
  let alice: string;
  let bob: string;
  let aliceKey: string;
  let bobKey: string;
  let aliceBefore: Record<string, string>;

  const admin = (method: string, path: string, body?: Json) => call(service.address, ROOT_KEY, method, path, body);
  const asAlice = (method: string, path: string, body?: Json) => call(service.address, aliceKey, method, path, body);
  const asBob = (method: string, path: string, body?: Json) => call(service.bobAddress, bobKey, method, path, body);

  async function storedUser(id: string, workspace: string): Promise<string> {
    expect((await admin('POST', '/users', { id, workspace_paths: [workspace] })).status).toBe(201);
    const created = await admin('POST', `/users/${id}/keys`, { name: 'laptop' });
    expect(created.status).toBe(201);
    return created.body.key as string;
  }

  /** Starts a run, waits for it to end, and returns it as its owner reads it. */
  async function endedRun(as: typeof asBob, body: Json): Promise<Json> {
    const started = await as('POST', '/runs', { agent_type: 'task', mode: 'auto_accept', on_ask: 'deny', ...body });
    expect(started.status, started.text).toBe(202);
    const id = started.body.id as string;
    const ended = await until(() => as('GET', `/runs/${id}`), (run) => !['queued', 'running', 'waiting_approval'].includes(run.body.status as string), 'the run to end');
    return ended.body;
  }

  beforeAll(async () => {
    if (skip) return;
    model = await startScriptedModel();
    base = realpathSync(mkdtempSync(join(tmpdir(), 'mada-workspaces-')));
    alice = join(base, 'alice');
    bob = join(base, 'bob');
    mkdirSync(join(alice, 'repo'), { recursive: true });
    mkdirSync(bob);
    writeFileSync(join(alice, 'secret.txt'), `${SECRET}\n`);
    writeFileSync(join(alice, 'notes.txt'), NOTES);
    writeFileSync(join(alice, 'repo', 'kept.txt'), `${SECRET} in git\n`);
    git(join(alice, 'repo'), 'init', '-q');
    git(join(alice, 'repo'), 'add', '.');
    git(join(alice, 'repo'), 'commit', '-q', '-m', `commit holding ${SECRET}`);
    writeFileSync(join(bob, 'own.txt'), `${BOB_OWN}\n`);
    service = await start({
      LLM_PROVIDER: 'ollama',
      LLM_BASE_URL: model.url,
      API_KEYS: `root:${ROOT_KEY}`,
      ADMIN_USERS: 'root',
      RATE_LIMIT_PER_MINUTE: '0',
    });
    for (const dir of service.startDirs) writeFileSync(join(dir, 'shared.txt'), `${SHARED_SECRET}\n`);
    aliceKey = await storedUser('alice', alice);
    bobKey = await storedUser('bob', bob);
    aliceBefore = tree(alice);
  });
  afterAll(async () => {
    await service?.close();
    await model?.close();
    if (base) rmSync(base, { recursive: true, force: true });
  });

  // Some thirty sandboxed processes: more than the default time on a loaded machine.
  it.skipIf(skip)("gives bob's task run nothing of alice's workspace through any tool, bash or a sub-agent", async () => {
    const attacks: { name: string; arguments: Json }[] = [
      { name: 'read_file', arguments: { file_path: join(alice, 'secret.txt') } },
      { name: 'read_file', arguments: { file_path: '../alice/secret.txt' } },
      { name: 'read_file', arguments: { file_path: join(service.startDirs[0]!, 'shared.txt') } },
      { name: 'write_file', arguments: { file_path: join(alice, 'notes.txt'), content: 'bob was here\n' } },
      { name: 'write_file', arguments: { file_path: join(alice, 'planted.txt'), content: 'bob was here\n' } },
      { name: 'edit_file', arguments: { file_path: join(alice, 'notes.txt'), old_string: 'alice', new_string: 'bob' } },
      { name: 'glob_files', arguments: { pattern: '**/*', path: alice } },
      { name: 'glob_files', arguments: { pattern: '**/*.txt', path: base } },
      { name: 'grep_content', arguments: { pattern: 'alice-secret-[0-9a-f]+', path: alice } },
      { name: 'grep_content', arguments: { pattern: 'alice-secret-[0-9a-f]+', path: base } },
      { name: 'bash_readonly', arguments: { command: `cat ${alice}/secret.txt` } },
      { name: 'bash_readonly', arguments: { command: 'ls', cwd: alice } },
      { name: 'bash', arguments: { command: `cat ${alice}/secret.txt` } },
      { name: 'bash', arguments: { command: `python3 -c "print(open('${alice}/secret.txt').read())"` } },
      { name: 'bash', arguments: { command: `python3 -c "open('${alice}/notes.txt', 'w').write('bob')"` } },
      { name: 'bash', arguments: { command: `ls -la ${alice}` } },
      { name: 'bash', arguments: { command: `find ${base}` } },
      { name: 'bash', arguments: { command: `git -C ${alice}/repo log -p` } },
      { name: 'bash', arguments: { command: 'git log -p', cwd: join(alice, 'repo') } },
      // Paths the command policy cannot see: only the sandbox's view keeps them from bob.
      { name: 'bash', arguments: { command: `python3 -c "import subprocess; subprocess.run(['git', '-C', '${alice}/repo', 'log', '-p'])"` } },
      { name: 'bash', arguments: { command: `python3 -c "import subprocess; subprocess.run(['cat', '${alice}/secret.txt'])"` } },
      { name: 'web_search', arguments: { query: `file://${alice}/secret.txt` } },
      { name: 'spawn_agent', arguments: { agent_type: 'explore', prompt: 'Read the notes.', working_dir: alice } },
    ];
    // What bob's sandbox shows: the listing and the mount table name his workspace and nothing of alice's.
    const views = [
      { name: 'bash', arguments: { command: `python3 -c "import os; print(sorted(os.listdir('${base}')))"` } },
      { name: 'bash', arguments: { command: `python3 -c "print(open('/proc/self/mountinfo').read())"` } },
      { name: 'bash', arguments: { command: 'cat own.txt' } },
    ];
    const steps: ScriptStep[] = [...attacks, ...views].map((attack) => scripted.toolCalls(attack));
    // A sub-agent in bob's own directory inherits his workspace: its read of alice's file is refused.
    steps.push(
      scripted.toolCalls({ name: 'spawn_agent', arguments: { agent_type: 'explore', prompt: 'Read the secret.' } }),
      scripted.toolCalls({ name: 'read_file', arguments: { file_path: join(alice, 'secret.txt') } }),
      (request) => scripted.text(`sub-agent saw: ${request.messages.filter((m) => m.role === 'tool').at(-1)?.content ?? ''}`),
      scripted.text('Done trying.'),
    );
    model.push(...steps);
    const requestsBefore = model.requests.length;

    const run = await endedRun(asBob, { prompt: 'Read everything you can.', working_dir: bob });
    expect(run.status).toBe('succeeded');

    const requests = model.requests.slice(requestsBefore);
    const results = requests.at(-1)!.messages.filter((m) => m.role === 'tool').map((m) => m.content);
    expect(results).toHaveLength(attacks.length + views.length + 1);
    for (const [index, result] of results.entries()) {
      expect(result, JSON.stringify([...attacks, ...views][index] ?? 'sub-agent')).not.toContain(SECRET);
      expect(result).not.toContain(SHARED_SECRET);
    }
    // The commands the policy cannot judge ran, in a sandbox where alice's workspace does not exist.
    for (const [index, attack] of attacks.entries()) {
      if (String(attack.arguments.command ?? '').startsWith('python3')) expect(results[index], String(attack.arguments.command)).toMatch(/No such file or directory|cannot access|not a git repository/);
    }
    const [listing, mounts, own] = results.slice(attacks.length, attacks.length + views.length);
    // The tools work: bob sees his own file and directory, so the refusals above are alice's alone.
    expect(listing).toContain("['bob']");
    expect(mounts).toContain(bob);
    expect(mounts).not.toContain(alice);
    expect(own).toContain(BOB_OWN);
    expect(results[attacks.length - 1]).toMatch(/Working directory not allowed/);
    expect(results.at(-1)).toMatch(/sub-agent saw: .*(outside allowed paths|not allowed)/i);

    // Alice's files, her git repository included, are exactly as they were.
    expect(tree(alice)).toEqual(aliceBefore);
    expect(git(join(alice, 'repo'), 'status', '--porcelain')).toBe('');
    // Nothing bob's run stored or sent to the model carries her secret.
    const events = await asBob('GET', `/runs/${run.id as string}/events`);
    expect(events.status).toBe(200);
    expect(events.text).toContain('"event":"done"');
    expect(events.text).not.toContain(SECRET);
    expect(JSON.stringify(run)).not.toContain(SECRET);
    expect(JSON.stringify(requests)).not.toContain(SECRET);
  }, 60_000);

  it.skipIf(skip)('refuses bob a conversation or a run in alice\'s workspace, or in ALLOWED_PATHS, with 400', async () => {
    const refused = (dir: string) => ({ status: 400, detail: `Working directory not allowed: ${dir}` });
    const answer = (response: { status: number; body: Json }) => ({ status: response.status, detail: response.body.detail });
    const climbing = `${bob}/../alice`;
    for (const dir of [alice, join(alice, 'repo'), climbing, '.', service.startDirs[0]!]) {
      expect(answer(await asBob('POST', '/conversations/', { agent_type: 'task', working_dir: dir })), dir).toEqual(refused(dir));
      expect(answer(await asBob('POST', '/runs', { agent_type: 'task', prompt: 'hi', working_dir: dir })), dir).toEqual(refused(dir));
      expect(answer(await asBob('POST', '/agents/run', { agent_type: 'task', prompt: 'hi', working_dir: dir })), dir).toEqual(refused(dir));
      expect(answer(await asBob('POST', '/agents/stream', { agent_type: 'task', prompt: 'hi', working_dir: dir })), dir).toEqual(refused(dir));
    }
    // Each in their own workspace, both may.
    expect((await asBob('POST', '/conversations/', { agent_type: 'task', working_dir: bob })).status).toBe(201);
    expect((await asAlice('POST', '/conversations/', { agent_type: 'task', working_dir: alice })).status).toBe(201);
    expect(tree(alice)).toEqual(aliceBefore);
  });

  it.skipIf(skip)("lets bob's revert touch none of alice's files, even in a directory that was his", async () => {
    // Alice's run makes a file; bob cannot revert it.
    model.push(scripted.toolCalls({ name: 'write_file', arguments: { file_path: 'made-by-alice.txt', content: 'alice made this\n' } }), scripted.text('Made.'));
    const aliceRun = await endedRun(asAlice, { prompt: 'Make a file.', working_dir: alice });
    expect(aliceRun.status).toBe('succeeded');
    expect((await asBob('POST', `/runs/${aliceRun.id as string}/revert`, { force: true })).status).toBe(403);
    expect(readFileSync(join(alice, 'made-by-alice.txt'), 'utf8')).toBe('alice made this\n');

    // Bob's run makes a file in his workspace, and a conversation there, while it is his.
    model.push(scripted.toolCalls({ name: 'write_file', arguments: { file_path: 'made-by-bob.txt', content: 'bob made this\n' } }), scripted.text('Made.'));
    const bobRun = await endedRun(asBob, { prompt: 'Make a file.', working_dir: bob });
    expect(bobRun.status).toBe('succeeded');
    expect((await asBob('GET', `/runs/${bobRun.id as string}/changes`)).status).toBe(200);
    const conversation = await asBob('POST', '/conversations/', { agent_type: 'task', working_dir: bob });
    expect(conversation.status).toBe(201);

    // The admin moves bob elsewhere and gives his old directory to alice.
    const later = join(base, 'bob-later');
    mkdirSync(later);
    expect((await admin('PATCH', '/users/bob', { workspace_paths: [later] })).status).toBe(200);
    expect((await admin('PATCH', '/users/alice', { workspace_paths: [alice, bob] })).status).toBe(200);
    const aliceNow = tree(bob);

    const lost = { status: 409, detail: `Working directory no longer in your workspace: ${bob}` };
    const revert = await asBob('POST', `/runs/${bobRun.id as string}/revert`, { force: true });
    expect({ status: revert.status, detail: revert.body.detail }).toEqual(lost);
    const changes = await asBob('GET', `/runs/${bobRun.id as string}/changes`);
    expect({ status: changes.status, detail: changes.body.detail }).toEqual(lost);
    expect(tree(bob)).toEqual(aliceNow);
    expect(existsSync(join(bob, 'made-by-bob.txt'))).toBe(true);
    // Nor can a turn of his old conversation start there.
    const turn = await asBob('POST', `/conversations/${conversation.body.id as string}/runs`, { content: 'go on' });
    expect({ status: turn.status, detail: turn.body.detail }).toEqual({ status: 400, detail: `Working directory not allowed: ${bob}` });
  });
});
