import { mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { scripted, startScriptedModel, type ScriptedModel } from '@mada/testkit';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { newKey } from '../../src/users/api-keys.js';
import { call, type Json } from '../support/api-call.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { createTestDatabase, DIALECTS } from '../support/databases.js';
import { until } from '../support/until.js';

/**
 * Users, keys and roles (TEAMS.md section 8) over real HTTP on loopback: root is an admin of
 * API_KEYS (ADMIN_USERS), bob a member of API_KEYS, alice a stored user with stored keys.
 */

const ROOT_KEY = 'root-key-2c9f4e71a0d3';
const BOB_KEY = 'bob-key-8e15b2c6f47a';
const KEY_SHAPE = /^mada_[0-9A-Za-z]{43}$/;

describe.each(DIALECTS)('users and keys on %s', (dialect) => {
  let model: ScriptedModel;
  let t: TestApp;
  let address: string;
  const as = (key: string | undefined, method: string, path: string, body?: Json) => call(address, key, method, path, body);

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

  /** A stored user with one key, made by root through the API. */
  async function storedUser(id: string): Promise<string> {
    expect((await as(ROOT_KEY, 'POST', '/users', { id })).status).toBe(201);
    const created = await as(ROOT_KEY, 'POST', `/users/${id}/keys`, { name: 'laptop' });
    expect(created.status).toBe(201);
    return created.body.key as string;
  }

  /** A run of `key`'s user that waits for an approval (bash `rm` asks in the default mode). */
  async function waitingRun(key: string): Promise<string> {
    model.push(scripted.toolCalls({ name: 'bash', arguments: { command: 'rm nothing.txt' } }));
    const started = await as(key, 'POST', '/runs', { agent_type: 'task', prompt: 'secret prompt 41c7', working_dir: '.' });
    expect(started.status).toBe(202);
    const id = started.body.id as string;
    await until(() => as(key, 'GET', `/runs/${id}`), (run) => run.body.status === 'waiting_approval', 'the run to wait for its approval');
    return id;
  }

  it('shows a configured admin and member who they are, with their role, workspace, quotas and usage', async () => {
    const root = await as(ROOT_KEY, 'GET', '/me');
    expect(root).toEqual({
      status: 200,
      body: {
        id: 'root',
        role: 'admin',
        workspace: { paths: [t.workdir] },
        quotas: { max_concurrent_runs: 2, max_runs_per_day: 0, max_tokens_per_day: 0 },
        usage: { runs_today: 0, tokens_today: 0, running: 0, by_model: [] },
      },
    });
    expect((await as(BOB_KEY, 'GET', '/me')).body).toMatchObject({ id: 'bob', role: 'member' });
    const listed = await as(ROOT_KEY, 'GET', '/users');
    expect(listed.status).toBe(200);
    expect(listed.body.users).toEqual(
      expect.arrayContaining([expect.objectContaining({ id: 'root', role: 'admin', source: 'config', created_at: null }), expect.objectContaining({ id: 'bob', role: 'member', source: 'config' })]),
    );
  });

  it('lets only admins manage users, with the exact refusals', async () => {
    for (const [method, path, body] of [
      ['GET', '/users'],
      ['POST', '/users', { id: 'sneaky' }],
      ['GET', '/users/root'],
      ['PATCH', '/users/root', { role: 'member' }],
      ['POST', '/users/bob/keys', { name: 'mine now' }],
      ['DELETE', '/users/root/keys/00000000-0000-4000-8000-000000000000'],
    ] as [string, string, Json?][]) {
      expect(await as(BOB_KEY, method, path, body), `${method} ${path}`).toEqual({ status: 403, body: { detail: 'Admin only' } });
    }
    expect((await as(ROOT_KEY, 'GET', '/users/sneaky')).body).toEqual({ detail: 'User not found' });
    expect(await as(ROOT_KEY, 'PATCH', '/users/nobody', { disabled: true })).toEqual({ status: 404, body: { detail: 'User not found' } });
    for (const id of ['..', 'a/b', '', '-dash', 'x'.repeat(65), 'sp ace']) {
      expect((await as(ROOT_KEY, 'POST', '/users', { id })).status, JSON.stringify(id)).toBe(422);
    }
    expect((await as(ROOT_KEY, 'POST', '/users', { id: 'carol', workspace_paths: ['relative/path'] })).status).toBe(422);
    expect((await as(ROOT_KEY, 'POST', '/users', { id: 'carol', quotas: { max_runs_per_day: -1 } })).status).toBe(422);
  });

  it('answers 404 for user ids no stored user can have, never an error of the database', async () => {
    const key = '00000000-0000-4000-8000-000000000000';
    for (const id of ['%00', 'a%00b', 'x'.repeat(300), '%F0%9F%98%80', '..%2F..']) {
      const notFound = { status: 404, body: { detail: 'User not found' } };
      expect(await as(ROOT_KEY, 'GET', `/users/${id}`), id).toEqual(notFound);
      expect(await as(ROOT_KEY, 'PATCH', `/users/${id}`, { disabled: true }), id).toEqual(notFound);
      expect(await as(ROOT_KEY, 'POST', `/users/${id}/keys`, { name: 'k' }), id).toEqual(notFound);
      expect(await as(ROOT_KEY, 'DELETE', `/users/${id}/keys/${key}`), id).toEqual({ status: 404, body: { detail: 'Key not found' } });
    }
  });

  it('stores a user once, keeps its quotas and workspace, and refuses the id of a configured user', async () => {
    // Outside ALLOWED_PATHS, which root and bob share: inside it would overlap theirs.
    const doraDir = realpathSync(mkdtempSync(join(tmpdir(), 'mada-dora-')));
    onTestFinished(() => rmSync(doraDir, { recursive: true, force: true }));
    const created = await as(ROOT_KEY, 'POST', '/users', { id: 'dora', role: 'member', workspace_paths: [doraDir], quotas: { max_runs_per_day: 5 } });
    expect(created.status).toBe(201);
    expect(created.body).toEqual({
      id: 'dora',
      role: 'member',
      disabled: false,
      created_at: expect.stringMatching(/Z$/),
      workspace: { paths: [doraDir] },
      quotas: { max_concurrent_runs: 2, max_runs_per_day: 5, max_tokens_per_day: 0 },
      source: 'stored',
    });
    expect(await as(ROOT_KEY, 'POST', '/users', { id: 'dora' })).toEqual({ status: 409, body: { detail: 'User already exists' } });
    expect(await as(ROOT_KEY, 'POST', '/users', { id: 'bob' })).toEqual({ status: 409, body: { detail: 'User already exists' } });
    const patched = await as(ROOT_KEY, 'PATCH', '/users/dora', { role: 'admin', quotas: { max_tokens_per_day: 1000 } });
    expect(patched.body).toMatchObject({ role: 'admin', quotas: { max_concurrent_runs: 2, max_runs_per_day: 5, max_tokens_per_day: 1000 } });
    // GET adds what the user used today.
    expect((await as(ROOT_KEY, 'GET', '/users/dora')).body).toEqual({ ...patched.body, usage: { runs_today: 0, tokens_today: 0, running: 0, by_model: [] } });
    expect((await as(ROOT_KEY, 'PATCH', '/users/bob', { disabled: true })).status).toBe(409);
  });

  it('makes keys that are shown once, stored as digests, and refused once revoked', async () => {
    const key = await storedUser('alice');
    expect(key).toMatch(KEY_SHAPE);
    const me = await as(key, 'GET', '/me');
    expect(me.body).toMatchObject({ id: 'alice', role: 'member' });

    const second = await as(key, 'POST', '/me/keys', { name: 'ci', expires_in_days: 30 });
    expect(second.status).toBe(201);
    const secondKey = second.body.key as string;
    expect(secondKey).toMatch(KEY_SHAPE);
    expect(second.body).toMatchObject({ name: 'ci', prefix: secondKey.slice(0, 12), revoked_at: null, last_used_at: null });
    expect(Date.parse(second.body.expires_at as string) - Date.parse(second.body.created_at as string)).toBe(30 * 86_400_000);

    // The database holds neither key, only their digests.
    const stored = await t.database.repository.users.listKeys('alice');
    expect(stored).toHaveLength(2);
    expect(JSON.stringify(stored)).not.toContain(key.slice(5));
    expect(JSON.stringify(stored)).not.toContain(secondKey.slice(5));

    // last_used_at is written off the request's path: on PostgreSQL through another connection.
    const listed = await until(() => as(secondKey, 'GET', '/me/keys'), (answer) => (answer.body.keys as Json[] | undefined)?.[1]?.last_used_at != null, 'the first use recorded');
    expect(listed.status).toBe(200);
    const keys = listed.body.keys as Json[];
    expect(keys.map((k) => k.name)).toEqual(['ci', 'laptop']);
    expect(JSON.stringify(listed.body)).not.toContain(key.slice(12));
    expect(keys[1]!.last_used_at).toEqual(expect.stringMatching(/Z$/));

    // Nobody learns another user's key ids: bob's delete of alice's key is an unknown key.
    expect(await as(BOB_KEY, 'DELETE', `/me/keys/${keys[0]!.id as string}`)).toEqual({ status: 404, body: { detail: 'Key not found' } });
    expect(await as(key, 'DELETE', '/me/keys/00000000-0000-4000-8000-000000000000')).toEqual({ status: 404, body: { detail: 'Key not found' } });
    expect(await as(key, 'DELETE', '/me/keys/not-a-uuid')).toEqual({ status: 404, body: { detail: 'Key not found' } });
    expect(await as(secondKey, 'DELETE', `/me/keys/${keys[1]!.id as string}`)).toEqual({ status: 204, body: {} });
    // At once on this replica.
    expect(await as(key, 'GET', '/me')).toEqual({ status: 401, body: { detail: 'Invalid API key' } });
    expect((await as(secondKey, 'GET', '/me')).status).toBe(200);
    const after = (await as(secondKey, 'GET', '/me/keys')).body.keys as Json[];
    expect(after[1]!.revoked_at).toEqual(expect.stringMatching(/Z$/));

    // An admin revokes a user's key the same way.
    expect((await as(ROOT_KEY, 'DELETE', `/users/alice/keys/${keys[0]!.id as string}`)).status).toBe(204);
    expect(await as(secondKey, 'GET', '/me')).toEqual({ status: 401, body: { detail: 'Invalid API key' } });
  });

  it('refuses an expired key, an unknown one and a disabled user\'s with the same 401', async () => {
    await storedUser('erin');
    const expired = newKey('erin', 'old', new Date(Date.now() - 3 * 86_400_000), 1);
    await t.database.repository.users.createKey(expired.record, 'system');
    expect(await as(expired.key, 'GET', '/me')).toEqual({ status: 401, body: { detail: 'Invalid API key' } });
    const unknown = newKey('erin', 'never stored', new Date());
    expect(await as(unknown.key, 'GET', '/me')).toEqual({ status: 401, body: { detail: 'Invalid API key' } });
  });

  it('cancels a disabled user\'s runs, keeps their events, and refuses their keys at once', async () => {
    const key = await storedUser('frank');
    const run = await waitingRun(key);
    const me = await as(key, 'GET', '/me');
    expect(me.body.usage).toEqual({ runs_today: 1, tokens_today: expect.any(Number), running: 1, by_model: [{ model: expect.any(String), runs: 1, tokens: expect.any(Number) }] });

    const disabled = await as(ROOT_KEY, 'PATCH', '/users/frank', { disabled: true });
    expect(disabled.body).toMatchObject({ id: 'frank', disabled: true });
    expect(await as(key, 'GET', '/me')).toEqual({ status: 401, body: { detail: 'Invalid API key' } });
    const stored = await until(() => t.database.repository.runs.findRun(run), (r) => r?.status === 'cancelled', 'the run to be cancelled');
    expect(stored?.error).toBe('Run cancelled');
    expect((await t.database.repository.runs.eventsAfter(run, 0, 100)).length).toBeGreaterThan(1);

    // Enabled again, the same key works, and the cancelled run counts no more as running.
    expect((await as(ROOT_KEY, 'PATCH', '/users/frank', { disabled: false })).status).toBe(200);
    expect((await as(key, 'GET', '/me')).body.usage).toMatchObject({ runs_today: 1, running: 0 });
  });

  it("lets an admin cancel anyone's run without reading it; other users' data stays Not authorized", async () => {
    const key = await storedUser('gina');
    const run = await waitingRun(key);
    expect(await as(BOB_KEY, 'POST', `/runs/${run}/cancel`)).toEqual({ status: 403, body: { detail: 'Not authorized' } });
    expect(await as(ROOT_KEY, 'GET', `/runs/${run}`)).toEqual({ status: 403, body: { detail: 'Not authorized' } });
    const cancelled = await as(ROOT_KEY, 'POST', `/runs/${run}/cancel`);
    expect(cancelled.status).toBe(202);
    expect(cancelled.body).toMatchObject({ id: run, status: 'cancelled', prompt: null, response: null });
    expect(JSON.stringify(cancelled.body)).not.toContain('secret prompt');
    // The owner's own cancel still shows the prompt.
    const own = await waitingRun(key);
    expect((await as(key, 'POST', `/runs/${own}/cancel`)).body).toMatchObject({ prompt: 'secret prompt 41c7' });
  });
});

describe.each(DIALECTS)('keyed or local mode on %s', (dialect) => {
  it('is local without API_KEYS and stored users: `local` is an admin and the key routes answer 409', async () => {
    const t = await createTestApp({ dialect });
    try {
      const address = await t.app.listen({ port: 0, host: '127.0.0.1' });
      expect((await call(address, undefined, 'GET', '/me')).body).toMatchObject({ id: 'local', role: 'admin' });
      const refused = { status: 409, body: { detail: 'Local mode has no keys' } };
      expect(await call(address, undefined, 'GET', '/me/keys')).toEqual(refused);
      expect(await call(address, undefined, 'POST', '/me/keys', { name: 'x' })).toEqual(refused);
      expect(await call(address, undefined, 'DELETE', '/me/keys/00000000-0000-4000-8000-000000000000')).toEqual(refused);
    } finally {
      await t.close();
    }
  });

  it('is keyed when the database holds a stored user, even without API_KEYS', async () => {
    const database = await createTestDatabase(dialect);
    const { key, record } = newKey('hana', 'first', new Date());
    await database.repository.users.createUser(
      { id: 'hana', role: 'admin', disabled: false, createdAt: new Date(), workspacePaths: '[]', maxConcurrentRuns: 0, maxRunsPerDay: 0, maxTokensPerDay: 0 },
      record,
      'system',
    );
    const t = await createTestApp({ dialect, database });
    try {
      const address = await t.app.listen({ port: 0, host: '127.0.0.1' });
      expect(await call(address, undefined, 'GET', '/me')).toEqual({ status: 401, body: { detail: 'Missing API key' } });
      expect((await call(address, key, 'GET', '/me')).body).toMatchObject({ id: 'hana', role: 'admin' });
      expect((await call(address, key, 'GET', '/me/keys')).status).toBe(200);
      // Guessing stored keys counts toward the failed-credential limit (30 a minute, the missing key
      // above included) like any other key.
      for (let i = 0; i < 29; i++) expect((await call(address, newKey('hana', 'guess', new Date()).key, 'GET', '/me')).status).toBe(401);
      const limited = await call(address, key, 'GET', '/me');
      expect(limited.status).toBe(429);
      expect(limited.body.detail).toMatch(/^Too many failed authentication attempts/);
    } finally {
      await t.close();
    }
  });
});
