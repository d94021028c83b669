import { createHash } from 'node:crypto';
import { mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { AuditLog } from '../../src/audit/audit-log.js';
import { SYSTEM_ACTOR } from '../../src/db/audit-repository.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { createTestDatabase, DIALECTS } from '../support/databases.js';
import { bySql } from './tamper.js';

/** The audit log (TEAMS.md section 10) over real HTTP: root is an admin of API_KEYS, bob a member. */

const ROOT_KEY = 'root-key-5d02c7b9e4a1';
const BOB_KEY = 'bob-key-93f1a6e0c28d';
type Json = Record<string, unknown>;
interface Entry {
  seq: number;
  at: string;
  actor: string;
  action: string;
  target: string | null;
  detail: Json;
  hash: string;
}

async function call(address: string, key: string, method: string, path: string, body?: Json): Promise<{ status: number; body: Json }> {
  const response = await fetch(`${address}${path}`, {
    method,
    headers: { 'x-api-key': key, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await response.text();
  return { status: response.status, body: text === '' ? {} : (JSON.parse(text) as Json) };
}

describe.each(DIALECTS)('the audit log on %s', (dialect) => {
  let t: TestApp;
  let address: string;
  const env = { API_KEYS: `root:${ROOT_KEY},bob:${BOB_KEY}`, ADMIN_USERS: 'root', RATE_LIMIT_PER_MINUTE: '0' };
  const as = (key: string, method: string, path: string, body?: Json) => call(address, key, method, path, body);
  const entries = async (query = ''): Promise<Entry[]> => {
    const page = await as(ROOT_KEY, 'GET', `/audit${query}`);
    expect(page.status).toBe(200);
    return page.body.entries as Entry[];
  };

  beforeAll(async () => {
    t = await createTestApp({ dialect, env });
    address = await t.app.listen({ port: 0, host: '127.0.0.1' });
  });
  afterAll(() => t?.close());

  it('records who made, changed and keyed a user, with nothing of the key in it', async () => {
    // A directory of her own: root, a user of API_KEYS, has ALLOWED_PATHS, which no one else may share.
    const aliceDir = realpathSync(mkdtempSync(join(tmpdir(), 'mada-audit-alice-')));
    onTestFinished(() => rmSync(aliceDir, { recursive: true, force: true }));
    expect((await as(ROOT_KEY, 'POST', '/users', { id: 'alice', workspace_paths: [aliceDir] })).status).toBe(201);
    // A user that exists already changes nothing, so nothing is recorded.
    expect((await as(ROOT_KEY, 'POST', '/users', { id: 'alice' })).status).toBe(409);
    const made = await as(ROOT_KEY, 'POST', '/users/alice/keys', { name: 'laptop' });
    expect(made.status).toBe(201);
    const aliceKey = made.body.key as string;
    const own = await call(address, aliceKey, 'POST', '/me/keys', { name: 'phone' });
    expect(own.status).toBe(201);
    expect((await call(address, aliceKey, 'DELETE', `/me/keys/${own.body.id as string}`)).status).toBe(204);
    expect((await as(ROOT_KEY, 'PATCH', '/users/alice', { disabled: true })).status).toBe(200);

    const log = await entries();
    expect(log.map((e) => [e.seq, e.actor, e.action, e.target])).toEqual([
      [1, SYSTEM_ACTOR, 'service.started', null],
      [2, 'root', 'user.created', 'user:alice'],
      [3, 'root', 'key.created', `key:${made.body.id as string}`],
      [4, 'alice', 'key.created', `key:${own.body.id as string}`],
      [5, 'alice', 'key.revoked', `key:${own.body.id as string}`],
      [6, 'root', 'user.updated', 'user:alice'],
    ]);
    expect(log[1]!.detail).toMatchObject({ user: 'alice', role: 'member', workspace_paths: [expect.stringContaining('mada-audit-alice-')] });
    expect(log[2]!.detail).toEqual({ user: 'alice', name: 'laptop', prefix: aliceKey.slice(0, 12), expires_at: null });
    expect(log[5]!.detail).toEqual({ disabled: true });
    const text = JSON.stringify(log);
    for (const key of [aliceKey, own.body.key as string]) {
      expect(text).not.toContain(key);
      expect(text).not.toContain(createHash('sha256').update(key).digest('hex'));
    }
    expect(await as(ROOT_KEY, 'GET', '/audit/verify')).toEqual({ status: 200, body: { ok: true, entries: 6, first_bad_seq: null } });
  });

  it('chains each hash to the one before, over RFC 8785 canonical JSON', async () => {
    const [first, second] = await entries('?limit=2');
    // Written out by hand: keys sorted, no whitespace, the hash of the previous entry in front.
    const canonical = `{"action":"service.started","actor":"system","at":"${first!.at}","detail":${JSON.stringify({ database: dialect, keyed: true, version: first!.detail.version })},"seq":1,"target":null}`;
    expect(first!.hash).toBe(createHash('sha256').update('0'.repeat(64) + canonical).digest('hex'));
    expect(second!.hash).toMatch(/^[0-9a-f]{64}$/);
    expect(second!.hash).not.toBe(first!.hash);
  });

  it('pages with after and next_after, and filters by actor and action', async () => {
    const first = await as(ROOT_KEY, 'GET', '/audit?limit=4');
    expect((first.body.entries as Entry[]).map((e) => e.seq)).toEqual([1, 2, 3, 4]);
    expect(first.body.next_after).toBe(4);
    const rest = await as(ROOT_KEY, 'GET', '/audit?after=4&limit=4');
    expect((rest.body.entries as Entry[]).map((e) => e.seq)).toEqual([5, 6]);
    expect(rest.body.next_after).toBeNull();
    expect((await entries('?actor=alice')).map((e) => e.seq)).toEqual([4, 5]);
    expect((await entries('?action=key.created')).map((e) => e.seq)).toEqual([3, 4]);
    expect((await entries('?actor=alice&action=key.revoked&after=4')).map((e) => e.seq)).toEqual([5]);
  });

  it('answers members 403 and bad parameters 422', async () => {
    for (const path of ['/audit', '/audit/verify', '/audit?limit=0']) expect(await call(address, BOB_KEY, 'GET', path)).toEqual({ status: 403, body: { detail: 'Admin only' } });
    for (const query of ['limit=0', 'limit=1001', 'limit=ten', 'after=-1', 'after=1.5', 'action=user.deleted', 'actor=']) {
      expect((await as(ROOT_KEY, 'GET', `/audit?${query}`)).status, query).toBe(422);
    }
    expect((await entries('?limit=1000')).length).toBe(6);
  });

  it('names the first entry changed or removed by hand, and repairs nothing', async () => {
    const verify = () => as(ROOT_KEY, 'GET', '/audit/verify');
    const [third] = await entries('?after=2&limit=1');
    const stored = JSON.stringify(third!.detail).replaceAll("'", "''");
    await bySql(t.database, `update audit_log set detail = '{"user":"alice","name":"laptop","prefix":"mada_0000000","expires_at":null}' where seq = 3`);
    expect(await verify()).toEqual({ status: 200, body: { ok: false, entries: 3, first_bad_seq: 3 } });
    // Still reported the next time: verification changes nothing.
    expect((await verify()).body.first_bad_seq).toBe(3);
    await bySql(t.database, `update audit_log set detail = '${stored}' where seq = 3`);
    expect((await verify()).body).toEqual({ ok: true, entries: 6, first_bad_seq: null });
    await bySql(t.database, `update audit_log set actor = 'bob' where seq = 5`);
    expect((await verify()).body).toMatchObject({ ok: false, first_bad_seq: 5 });
    await bySql(t.database, `update audit_log set actor = 'alice' where seq = 5`);
    await bySql(t.database, 'delete from audit_log where seq = 4');
    expect((await verify()).body).toMatchObject({ ok: false, first_bad_seq: 4 });
  });

  it('stores no change whose entry could not be appended: both are one transaction', async () => {
    const refuse =
      dialect === 'sqlite'
        ? "create trigger refuse before insert on audit_log when new.action = 'user.created' begin select raise(abort, 'refused'); end"
        : "alter table audit_log add constraint refuse check (action <> 'user.created') not valid";
    await bySql(t.database, refuse);
    try {
      expect((await as(ROOT_KEY, 'POST', '/users', { id: 'carol' })).status).toBe(500);
    } finally {
      await bySql(t.database, dialect === 'sqlite' ? 'drop trigger refuse' : 'alter table audit_log drop constraint refuse');
    }
    expect((await as(ROOT_KEY, 'GET', '/users/carol')).status).toBe(404);
    expect((await as(ROOT_KEY, 'POST', '/users', { id: 'carol' })).status).toBe(201);
    expect((await entries('?action=user.created')).map((e) => e.target)).toEqual(['user:alice', 'user:carol']);
  });

  it('records a replica stopping, and keeps appending after it', async () => {
    const other = await createTestApp({ env, shareDatabaseOf: t });
    await other.close();
    const stops = await entries('?action=service.stopped');
    expect(stops).toMatchObject([{ actor: SYSTEM_ACTOR, target: null, detail: { database: dialect } }]);
    expect((await entries('?action=service.started')).length).toBe(2);
  });
});

describe.each(DIALECTS)('verifying the audit log on %s', (dialect) => {
  it('reads the chain a page at a time and finds a change past the first page', async () => {
    const database = await createTestDatabase(dialect);
    try {
      const log = new AuditLog(database.repository.audit, 3);
      for (let i = 0; i < 10; i++) await log.append({ at: new Date(), actor: 'root', action: 'user.updated', target: `user:u${i}`, detail: { disabled: i % 2 === 0 } });
      expect(await log.verify()).toEqual({ ok: true, entries: 10, firstBadSeq: null });
      await bySql(database, `update audit_log set detail = '{"disabled":false}' where seq = 7`);
      expect(await log.verify()).toEqual({ ok: false, entries: 7, firstBadSeq: 7 });
      await bySql(database, 'delete from audit_log where seq = 1');
      expect(await log.verify()).toEqual({ ok: false, entries: 1, firstBadSeq: 1 });
    } finally {
      await database.drop();
    }
  });
});
