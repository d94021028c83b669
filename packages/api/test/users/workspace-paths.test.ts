import { chmodSync, existsSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, realpathSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, type Answer, type Json } from '../support/api-call.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { DIALECTS } from '../support/databases.js';

/**
 * Where each user's agents may work (TEAMS.md section 9), over real HTTP on loopback: root (an
 * admin) and bob (a member) of API_KEYS, and users root stores with or without paths.
 */

const ROOT_KEY = 'root-key-61d0c9a7e24b';
const BOB_KEY = 'bob-key-3f85e1b07c92';
const TEAM = { API_KEYS: `root:${ROOT_KEY},bob:${BOB_KEY}`, ADMIN_USERS: 'root', RATE_LIMIT_PER_MINUTE: '0' };

const overlaps = (path: string): Answer => ({ status: 409, body: { detail: `Workspace overlaps another user's: ${path}` } });

/** A scratch directory of the test's own, symbolic links resolved. */
function scratch(prefix: string): string {
  return realpathSync(mkdtempSync(join(tmpdir(), prefix)));
}

describe.each(DIALECTS)('workspaces under WORKSPACES_DIR on %s', (dialect) => {
  let t: TestApp;
  let address: string;
  let base: string;
  let root: string;
  let outside: string;
  const as = (key: string, method: string, path: string, body?: Json) => call(address, key, method, path, body);

  /** A stored user made by root, and a key of theirs. */
  async function storedUser(id: string, workspacePaths?: string[]): Promise<string> {
    const created = await as(ROOT_KEY, 'POST', '/users', { id, ...(workspacePaths ? { workspace_paths: workspacePaths } : {}) });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    return (await as(ROOT_KEY, 'POST', `/users/${id}/keys`, { name: 'laptop' })).body.key as string;
  }

  beforeAll(async () => {
    base = scratch('mada-ws-');
    // Not there yet: the service makes it, parents included.
    root = join(base, 'team', 'workspaces');
    outside = scratch('mada-ws-outside-');
    t = await createTestApp({ dialect, env: { ...TEAM, WORKSPACES_DIR: root } });
    address = await t.app.listen({ port: 0, host: '127.0.0.1' });
  });
  afterAll(async () => {
    await t?.close();
    for (const dir of [base, outside]) if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it("makes WORKSPACES_DIR and each user's directory there with mode 0700 on first use, and /me shows it", async () => {
    expect(statSync(root).mode & 0o777).toBe(0o700);
    expect(existsSync(join(root, 'bob'))).toBe(false);
    expect(await as(BOB_KEY, 'GET', '/me')).toMatchObject({ status: 200, body: { id: 'bob', workspace: { paths: [join(root, 'bob')] } } });
    const made = lstatSync(join(root, 'bob'));
    expect([made.isDirectory(), made.mode & 0o777, made.uid]).toEqual([true, 0o700, process.getuid!()]);

    const carolKey = await storedUser('carol');
    expect((await as(ROOT_KEY, 'GET', '/users/carol')).body).toMatchObject({ workspace: { paths: [join(root, 'carol')] }, source: 'stored' });
    expect((await as(carolKey, 'GET', '/me')).body).toMatchObject({ workspace: { paths: [join(root, 'carol')] } });
    expect(statSync(join(root, 'carol')).mode & 0o777).toBe(0o700);
    // A directory already made is used as it is: a file left in it stays.
    writeFileSync(join(root, 'carol', 'notes.txt'), 'kept');
    expect((await as(carolKey, 'GET', '/me')).status).toBe(200);
    expect(readdirSync(join(root, 'carol'))).toEqual(['notes.txt']);
  });

  it("starts a relative working_dir of the MCP tools in the user's own workspace, and one of the routes in the start directory", async () => {
    mkdirSync(join(root, 'bob', 'app'), { recursive: true });
    const client = new Client({ name: 'workspace-test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${address}/mcp`), { requestInit: { headers: { 'x-api-key': BOB_KEY } } }));
    try {
      // The tools' description: relative to your workspace, its root by default.
      for (const [args, dir] of [[{}, join(root, 'bob')], [{ working_dir: 'app' }, join(root, 'bob', 'app')]] as const) {
        const result = (await client.callTool({ name: 'explore', arguments: { prompt: 'look around', ...args } })) as CallToolResult;
        const runId = (result._meta as { run_id?: string } | undefined)?.run_id;
        expect(runId, JSON.stringify(result)).toBeDefined();
        expect((await as(BOB_KEY, 'GET', `/runs/${runId!}`)).body.working_dir).toBe(dir);
      }
      const out = (await client.callTool({ name: 'explore', arguments: { prompt: 'x', working_dir: '../root' } })) as CallToolResult;
      expect(out).toMatchObject({ isError: true, content: [{ type: 'text', text: 'Working directory not allowed: ../root' }] });
    } finally {
      await client.close();
    }
    // `.` of the HTTP routes is the service's start directory (DECISIONS.md), which is not bob's.
    expect(await as(BOB_KEY, 'POST', '/runs', { agent_type: 'explore', prompt: 'x' })).toMatchObject({ status: 400, body: { detail: 'Working directory not allowed: .' } });
  });

  it("refuses paths that contain or lie inside another user's directory there, links resolved", async () => {
    await as(BOB_KEY, 'GET', '/me');
    mkdirSync(join(root, 'bob', 'project'), { recursive: true });
    expect(await as(ROOT_KEY, 'POST', '/users', { id: 'dave', workspace_paths: [join(root, 'bob', 'project')] })).toEqual(overlaps(join(root, 'bob', 'project')));
    expect(await as(ROOT_KEY, 'POST', '/users', { id: 'dave', workspace_paths: [outside, base] })).toEqual(overlaps(base));
    // A link from elsewhere into bob's directory is bob's directory.
    const link = join(outside, 'innocent-looking');
    symlinkSync(join(root, 'bob', 'project'), link);
    expect(await as(ROOT_KEY, 'POST', '/users', { id: 'dave', workspace_paths: [link] })).toEqual(overlaps(link));
    expect(await as(ROOT_KEY, 'GET', '/users/dave')).toEqual({ status: 404, body: { detail: 'User not found' } });
  });

  it('refuses a user whose directory there is a path stored for someone else', async () => {
    const claimed = join(root, 'claimed');
    mkdirSync(claimed);
    await storedUser('erin', [claimed]);
    expect(await as(ROOT_KEY, 'POST', '/users', { id: 'claimed' })).toEqual(overlaps(claimed));
    expect(await as(ROOT_KEY, 'GET', '/users/claimed')).toEqual({ status: 404, body: { detail: 'User not found' } });
    expect(await as(ROOT_KEY, 'GET', '/health')).toMatchObject({ status: 200, body: { tenancy: 'per_user' } });
  });

  it('refuses to use what stands at a user\'s place if it is a link or not a directory, and touches nothing behind it', async () => {
    const target = scratch('mada-ws-target-');
    try {
      writeFileSync(join(target, 'precious.txt'), 'untouched');
      chmodSync(target, 0o755);
      symlinkSync(target, join(root, 'gina'));
      writeFileSync(join(root, 'hank'), 'a file');
      const ginaKey = await storedUser('gina');
      const hankKey = await storedUser('hank');
      expect(await as(ginaKey, 'GET', '/me')).toEqual({ status: 409, body: { detail: `Workspace is a symbolic link: ${join(root, 'gina')}` } });
      expect(await as(hankKey, 'GET', '/me')).toEqual({ status: 409, body: { detail: `Workspace is not a directory: ${join(root, 'hank')}` } });
      expect(statSync(target).mode & 0o777).toBe(0o755);
      expect(readdirSync(target)).toEqual(['precious.txt']);
    } finally {
      rmSync(target, { recursive: true, force: true });
    }
  });
});

describe.each(DIALECTS)('stored workspace paths on %s', (dialect) => {
  let t: TestApp;
  let address: string;
  let shared: string;
  let outside: string;
  const as = (key: string, method: string, path: string, body?: Json) => call(address, key, method, path, body);

  beforeAll(async () => {
    shared = scratch('mada-ws-shared-');
    outside = scratch('mada-ws-own-');
    // No WORKSPACES_DIR: root and bob share ALLOWED_PATHS, as in version 1.1.
    t = await createTestApp({ dialect, env: { ...TEAM, ALLOWED_PATHS: shared } });
    address = await t.app.listen({ port: 0, host: '127.0.0.1' });
  });
  afterAll(async () => {
    await t?.close();
    for (const dir of [shared, outside]) if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('stores paths with their links resolved, and refuses overlaps both ways, through links too', async () => {
    const alice = join(outside, 'alice');
    mkdirSync(join(alice, 'src'), { recursive: true });
    symlinkSync(alice, join(outside, 'alice-link'));
    const created = await as(ROOT_KEY, 'POST', '/users', { id: 'alice', workspace_paths: [join(outside, 'alice-link')] });
    expect(created).toMatchObject({ status: 201, body: { workspace: { paths: [alice] } } });

    // Inside hers, containing hers, or a link to either: refused, on creation and on change.
    expect(await as(ROOT_KEY, 'POST', '/users', { id: 'mallory', workspace_paths: [join(alice, 'src')] })).toEqual(overlaps(join(alice, 'src')));
    expect(await as(ROOT_KEY, 'POST', '/users', { id: 'mallory', workspace_paths: [outside] })).toEqual(overlaps(outside));
    const sneaky = join(outside, 'sneaky');
    symlinkSync(join(alice, 'src'), sneaky);
    expect(await as(ROOT_KEY, 'POST', '/users', { id: 'mallory', workspace_paths: [sneaky] })).toEqual(overlaps(sneaky));
    const own = join(outside, 'mallory');
    mkdirSync(own);
    expect((await as(ROOT_KEY, 'POST', '/users', { id: 'mallory', workspace_paths: [own] })).status).toBe(201);
    // Named as given, also after a path the service finds twice (a link to one already listed).
    symlinkSync(own, join(outside, 'mallory-link'));
    expect(await as(ROOT_KEY, 'PATCH', '/users/mallory', { workspace_paths: [own, join(outside, 'mallory-link'), sneaky] })).toEqual(overlaps(sneaky));
    expect((await as(ROOT_KEY, 'GET', '/users/mallory')).body).toMatchObject({ workspace: { paths: [own] } });
    expect(await as(ROOT_KEY, 'PATCH', '/users/mallory', { workspace_paths: [own, join(outside, 'mallory-link')] })).toMatchObject({ status: 200, body: { workspace: { paths: [own] } } });
    // Her own paths may change freely, even to ones below what she had.
    expect(await as(ROOT_KEY, 'PATCH', '/users/alice', { workspace_paths: [join(alice, 'src')] })).toMatchObject({ status: 200, body: { workspace: { paths: [join(alice, 'src')] } } });
  });

  it("refuses a path inside the ALLOWED_PATHS others share, and a user who would share it over someone's path", async () => {
    mkdirSync(join(shared, 'team-a'));
    expect(await as(ROOT_KEY, 'POST', '/users', { id: 'oscar', workspace_paths: [join(shared, 'team-a')] })).toEqual(overlaps(join(shared, 'team-a')));
    // Sharing ALLOWED_PATHS with root and bob is allowed (tenancy "shared").
    expect(await as(ROOT_KEY, 'POST', '/users', { id: 'oscar' })).toMatchObject({ status: 201, body: { workspace: { paths: [shared] } } });
  });

  it('says which path does not exist or is not a directory (422), and stores nothing', async () => {
    const missing = join(outside, 'missing');
    const file = join(outside, 'file.txt');
    writeFileSync(file, 'x');
    expect(await as(ROOT_KEY, 'POST', '/users', { id: 'pat', workspace_paths: [missing] })).toEqual({ status: 422, body: { detail: `Workspace path does not exist: ${missing}` } });
    expect(await as(ROOT_KEY, 'POST', '/users', { id: 'pat', workspace_paths: [file] })).toEqual({ status: 422, body: { detail: `Workspace path is not a directory: ${file}` } });
    expect((await as(ROOT_KEY, 'POST', '/users', { id: 'pat', workspace_paths: ['relative'] })).status).toBe(422);
    expect((await as(ROOT_KEY, 'GET', '/users/pat')).status).toBe(404);
  });

  it('shows /health tenancy "shared" while users share ALLOWED_PATHS', async () => {
    expect(await call(address, undefined, 'GET', '/health')).toMatchObject({ status: 200, body: { tenancy: 'shared' } });
  });
});
