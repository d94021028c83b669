import { chmodSync, mkdirSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { runServiceToExit, startService, type ServiceProcess } from './support/service-process.js';
import { locateProgram } from '../src/tools/sandbox/exec/program-path.js';
import { tempDir } from '../../../test/helpers/temp-dirs.js';

const workdir = () => tempDir('mada-main-');
let running: ServiceProcess | undefined;
let slowServer: Server | undefined;
afterEach(() => {
  running?.child.kill('SIGKILL');
  slowServer?.close();
  running = slowServer = undefined;
});

describe('service start-up', () => {
  it('refuses a non-loopback HOST without API_KEYS, in one line', async () => {
    const { code, stderr } = await runServiceToExit({ HOST: '0.0.0.0' }, workdir());
    expect(code).toBe(1);
    expect(stderr).toBe(
      'mada-api: Invalid setting HOST: refusing to listen on 0.0.0.0 without API_KEYS: set API_KEYS or bind to a loopback address\n',
    );
  });

  it('refuses CORS_ORIGINS=* without API_KEYS (every site could drive the agents), in one line', async () => {
    const { code, stderr } = await runServiceToExit({ CORS_ORIGINS: 'https://app.example,*' }, workdir());
    expect(code).toBe(1);
    expect(stderr).toBe(
      'mada-api: Invalid setting CORS_ORIGINS: refusing * without API_KEYS: every web page could run agents through the browser; list the origins or set API_KEYS\n',
    );
    // With keys every request still needs one, so any origin may call.
    running = await startService({ CORS_ORIGINS: '*', API_KEYS: 'alice:alice-key-0123456789' }, workdir());
    expect((await fetch(`${running.url}/health`, { headers: { origin: 'https://any.example' } })).status).toBe(200);
  });

  it('refuses CORS_ORIGINS=* with CORS_ALLOW_CREDENTIALS=true, keys or not (any site would read a signed-in user\'s data)', async () => {
    const { code, stderr } = await runServiceToExit(
      { CORS_ORIGINS: '*', CORS_ALLOW_CREDENTIALS: 'true', API_KEYS: 'alice:alice-key-0123456789' },
      workdir(),
    );
    expect(code).toBe(1);
    expect(stderr).toBe(
      "mada-api: Invalid setting CORS_ORIGINS: refusing * with CORS_ALLOW_CREDENTIALS=true: every web page could read a signed-in user's data through the browser; list the origins\n",
    );
  });

  it('stops on an invalid setting with one line naming the variable', async () => {
    const { code, stderr } = await runServiceToExit({ SUMMARIZATION_THRESHOLD: 'high' }, workdir());
    expect(code).toBe(1);
    expect(stderr).toBe('mada-api: Invalid setting SUMMARIZATION_THRESHOLD: expected a number, got "high"\n');
  });

  it('reads settings from a .env file in the start directory', async () => {
    const dir = workdir();
    const { writeFileSync } = await import('node:fs');
    writeFileSync(join(dir, '.env'), 'KEEP_RECENT_MESSAGES=many\n');
    const { code, stderr } = await runServiceToExit({}, dir);
    expect(code).toBe(1);
    expect(stderr).toContain('Invalid setting KEEP_RECENT_MESSAGES');
  });

  it('starts on the embedded SQLite default, answers /health, and creates the data directory', async () => {
    const dir = workdir();
    running = await startService({}, dir);
    const health = await fetch(`${running.url}/health`);
    expect(health.status).toBe(200);
    expect(((await health.json()) as { checks: Record<string, string> }).checks.database).toBe('ok');
    const { existsSync } = await import('node:fs');
    expect(existsSync(join(dir, 'data', 'mada.db'))).toBe(true);
  });

  it('says in its log that local mode trusts every process on the machine', async () => {
    running = await startService({}, workdir());
    await expect.poll(() => running!.output()).toMatch(/local mode trusts every process on this machine.*on a shared machine set API_KEYS/i);
  });

  it("warns at start-up when ALLOWED_PATHS holds the service user's home (its start-up files run outside the sandbox)", async () => {
    const home = workdir();
    running = await startService({ HOME: home }, home);
    await expect.poll(() => running!.output()).toMatch(/ALLOWED_PATHS holds the service user's home directory: bash can rewrite its start-up files/);
  });

  it('does not warn about the home directory when the service starts in a project below it', async () => {
    const home = workdir();
    mkdirSync(join(home, 'project'));
    running = await startService({ HOME: home }, join(home, 'project'));
    await expect.poll(() => running!.output()).toMatch(/local mode trusts every process/i);
    expect(running.output()).not.toMatch(/holds the service user's home directory/);
  });

  it("gives bash a network of its own, or warns at start-up that it shares the host's, loopback included", async () => {
    running = await startService({ SANDBOX_NETWORK: 'true' }, workdir());
    const health = (await (await fetch(`${running.url}/health`)).json()) as { checks: Record<string, string> };
    if (locateProgram('slirp4netns', '/usr/bin:/bin:/usr/sbin:/sbin') !== undefined) expect(health.checks.bash_network).toBe('own');
    else {
      expect(health.checks.bash_network).toBe('host');
      await expect
        .poll(() => running!.output())
        .toMatch(/bash shares the host's network \(SANDBOX_NETWORK=true\).*slirp4netns.*: it can reach services on 127\.0\.0\.1.*own API asks no key.*Set SANDBOX_NETWORK=false, or API_KEYS/);
    }
  });
});

describe('start-up with several users', () => {
  const team = { API_KEYS: 'ann:ann-key-5e0b7f2c91d4,ben:ben-key-a17c4d8e03f6', LLM_BASE_URL: 'http://127.0.0.1:9' };
  const sharingWarning = /users share ALLOWED_PATHS: each user's agents can read and change every other user's files/g;

  it('warns once that users share ALLOWED_PATHS when they do', { timeout: 60_000 }, async () => {
    running = await startService(team, workdir());
    expect(((await (await fetch(`${running.url}/health`)).json()) as { tenancy: string }).tenancy).toBe('shared');
    await expect.poll(() => running!.output()).toMatch(sharingWarning);
    expect(running.output().match(sharingWarning)).toHaveLength(1);
  });

  it('gives each user a directory of their own with WORKSPACES_DIR, and does not warn', { timeout: 60_000 }, async () => {
    const dir = workdir();
    running = await startService({ ...team, WORKSPACES_DIR: join(dir, 'workspaces') }, dir);
    expect(((await (await fetch(`${running.url}/health`)).json()) as { tenancy: string }).tenancy).toBe('per_user');
    const me = (await (await fetch(`${running.url}/me`, { headers: { 'x-api-key': 'ben-key-a17c4d8e03f6' } })).json()) as { workspace: { paths: string[] } };
    expect(me.workspace.paths).toEqual([join(dir, 'workspaces', 'ben')]);
    expect(running.output()).not.toMatch(sharingWarning);
  });

  it('refuses, in one line, a configured id that cannot name a directory under WORKSPACES_DIR', async () => {
    const { code, stderr } = await runServiceToExit({ API_KEYS: 'ann:ann-key-5e0b7f2c91d4,../etc:sneaky-key-0123', WORKSPACES_DIR: '/srv/never-made' }, workdir());
    expect(code).toBe(1);
    expect(stderr).toBe(
      'mada-api: Invalid setting API_KEYS: user id "../etc" cannot name a directory under WORKSPACES_DIR: a user id is 1 to 64 letters, digits, ".", "_" or "-", starting with a letter or digit\n',
    );
  });

  it("refuses to start, in one line, when a user added to API_KEYS would get a directory inside another user's stored paths", { timeout: 60_000 }, async () => {
    const dir = workdir();
    const workspaces = join(dir, 'workspaces');
    const settings = { API_KEYS: 'ann:ann-key-5e0b7f2c91d4', ADMIN_USERS: 'ann', WORKSPACES_DIR: workspaces, LLM_BASE_URL: 'http://127.0.0.1:9' };
    running = await startService(settings, dir);
    // Nobody is called dan yet, so carol may be given the directory that will later be his.
    mkdirSync(join(workspaces, 'dan'), { mode: 0o700 });
    const created = await fetch(`${running.url}/users`, {
      method: 'POST',
      headers: { 'x-api-key': 'ann-key-5e0b7f2c91d4', 'content-type': 'application/json' },
      body: JSON.stringify({ id: 'carol', workspace_paths: [join(workspaces, 'dan')] }),
    });
    expect(created.status).toBe(201);
    running.child.kill('SIGKILL');
    running = undefined;

    const { code, stderr } = await runServiceToExit({ ...settings, API_KEYS: `${settings.API_KEYS},dan:dan-key-77c0e4a19b2d` }, dir);
    expect(code).toBe(1);
    expect(stderr).toBe(
      `mada-api: the workspaces of users dan and carol overlap at ${join(workspaces, 'dan')}: each would reach the other's files. Change one of them (API_KEYS, or the stored user's workspace_paths) before starting\n`,
    );
  });

  it('refuses, in one line, a WORKSPACES_DIR other accounts may write', async () => {
    const dir = workdir();
    const open = join(dir, 'open');
    mkdirSync(open);
    chmodSync(open, 0o777);
    const { code, stderr } = await runServiceToExit({ ...team, WORKSPACES_DIR: open }, dir);
    expect(code).toBe(1);
    expect(stderr).toBe(`mada-api: Invalid setting WORKSPACES_DIR: ${open} is writable by other accounts (mode 777): chmod go-w it\n`);
  });
});

describe('graceful shutdown', () => {
  it('finishes a request in flight on SIGTERM, refuses new ones, and exits 0', async () => {
    // A model runtime that takes a second to answer keeps GET /health in flight.
    slowServer = createServer((_req, res) => setTimeout(() => res.end('{}'), 1000));
    await new Promise<void>((resolve) => slowServer!.listen(0, '127.0.0.1', resolve));
    const address = slowServer.address();
    const port = typeof address === 'object' && address ? address.port : 0;
    running = await startService({ LLM_BASE_URL: `http://127.0.0.1:${port}` }, workdir());

    const inFlight = fetch(`${running.url}/health`);
    await new Promise((resolve) => setTimeout(resolve, 200));
    running.child.kill('SIGTERM');
    await new Promise((resolve) => setTimeout(resolve, 200));
    const late = await fetch(`${running.url}/`).then((r) => r.status, (e: Error) => e.message);
    expect([503, 'fetch failed']).toContain(late);
    const response = await inFlight;
    expect(response.status).toBe(200);
    expect(((await response.json()) as { checks: Record<string, string> }).checks.model_runtime).toBe('ok');
    expect(await running.exited).toBe(0);
    expect(running.output()).toContain('SIGTERM: finishing in-flight requests');
  });
});
