import { mkdirSync, mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startReplicas, type Replicas } from '../support/app.js';
import { TEST_DATABASE_URL } from '../support/databases.js';

const ROOT_KEY = 'root-key-6b1e0f93c2a4';

/**
 * Milliseconds from now until `probe` answers `status`, polled every 50 ms for at most 5 s: each
 * 401 counts toward the failed-credential limit (30 a minute), which faster polling would reach.
 */
async function msUntilStatus(probe: () => Promise<number>, status: number): Promise<number> {
  const start = performance.now();
  while (performance.now() - start < 5000) {
    if ((await probe()) === status) return performance.now() - start;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return Infinity;
}

/** Two services on one PostgreSQL database: what one changes, the other enforces within a second. */
describe.skipIf(!TEST_DATABASE_URL)('keys across replicas on postgres', () => {
  let replicas: Replicas;
  let addressA: string;
  let addressB: string;

  beforeAll(async () => {
    replicas = await startReplicas({ API_KEYS: `root:${ROOT_KEY}`, ADMIN_USERS: 'root', RATE_LIMIT_PER_MINUTE: '0' });
    ({ addressA, addressB } = replicas);
  });
  afterAll(async () => {
    await replicas?.close();
  });

  const call = async (address: string, key: string, method: string, path: string, body?: object): Promise<Response> =>
    fetch(`${address}${path}`, {
      method,
      headers: { 'x-api-key': key, ...(body ? { 'content-type': 'application/json' } : {}) },
      ...(body ? { body: JSON.stringify(body) } : {}),
    });
  const meOnB = async (key: string): Promise<number> => (await call(addressB, key, 'GET', '/me')).status;

  async function userWithKey(id: string): Promise<{ key: string; keyId: string }> {
    expect((await call(addressA, ROOT_KEY, 'POST', '/users', { id })).status).toBe(201);
    const created = (await (await call(addressA, ROOT_KEY, 'POST', `/users/${id}/keys`, { name: 'k' })).json()) as { key: string; id: string };
    return { key: created.key, keyId: created.id };
  }

  it('refuses a key revoked on the other replica within a second', async () => {
    const { key, keyId } = await userWithKey('ivy');
    // A key made on A works on B at once (B never cached its absence), and B now holds it.
    expect(await meOnB(key)).toBe(200);
    expect(await meOnB(key)).toBe(200);
    expect((await call(addressA, ROOT_KEY, 'DELETE', `/users/ivy/keys/${keyId}`)).status).toBe(204);
    expect(await msUntilStatus(() => meOnB(key), 401)).toBeLessThan(1000);
    // And it stays refused.
    expect(await meOnB(key)).toBe(401);
  });

  it("refuses a user disabled on the other replica within a second, and lets them in again", async () => {
    const { key } = await userWithKey('jon');
    expect(await meOnB(key)).toBe(200);
    expect((await call(addressA, ROOT_KEY, 'PATCH', '/users/jon', { disabled: true })).status).toBe(200);
    expect(await msUntilStatus(() => meOnB(key), 401)).toBeLessThan(1000);
    expect((await call(addressA, ROOT_KEY, 'PATCH', '/users/jon', { disabled: false })).status).toBe(200);
    expect(await msUntilStatus(() => meOnB(key), 200)).toBeLessThan(1000);
  });

  /** Signs in on `address` with the key: the `mada_session=…` pair of the cookie set. */
  async function signIn(address: string, key: string): Promise<string> {
    const answer = await fetch(`${address}/session`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ key }) });
    expect(answer.status).toBe(204);
    return answer.headers.getSetCookie()[0]!.split(';')[0]!;
  }
  const meByCookie = async (address: string, cookie: string): Promise<number> => (await fetch(`${address}/me`, { headers: { cookie } })).status;

  it('accepts a console session made on one replica on the other, and ends it there when its key is revoked', async () => {
    const { key, keyId } = await userWithKey('kim');
    const cookie = await signIn(addressA, key);
    expect(await meByCookie(addressB, cookie)).toBe(200);
    expect(await meByCookie(addressB, cookie)).toBe(200);
    expect((await call(addressA, ROOT_KEY, 'DELETE', `/users/kim/keys/${keyId}`)).status).toBe(204);
    expect(await msUntilStatus(() => meByCookie(addressB, cookie), 401)).toBeLessThan(1000);
    expect(await meByCookie(addressB, cookie)).toBe(401);
  });

  it('ends a console session on the other replica at sign-out', async () => {
    const { key } = await userWithKey('lea');
    const cookie = await signIn(addressB, key);
    expect(await meByCookie(addressA, cookie)).toBe(200);
    const out = await fetch(`${addressB}/session`, { method: 'DELETE', headers: { cookie, origin: addressB } });
    expect(out.status).toBe(204);
    expect(await msUntilStatus(() => meByCookie(addressA, cookie), 401)).toBeLessThan(1000);
  });

  it('lets only one of two overlapping workspaces given at the same instant on two replicas through', async () => {
    const scratch = realpathSync(mkdtempSync(join(tmpdir(), 'mada-race-')));
    try {
      // Several rounds: one round may happen to run the two changes one after the other anyway.
      for (let round = 0; round < 8; round += 1) {
        const outer = join(scratch, `r${round}`);
        const inner = join(outer, 'inner');
        mkdirSync(inner, { recursive: true });
        // A new user on A holding `outer`, and on B an existing user moved to `inner`, inside it.
        expect((await call(addressB, ROOT_KEY, 'POST', '/users', { id: `mover${round}` })).status).toBe(201);
        const read = async (answer: Promise<Response>) => {
          const response = await answer;
          return { status: response.status, body: (await response.json()) as { detail?: string } };
        };
        const [created, moved] = await Promise.all([
          read(call(addressA, ROOT_KEY, 'POST', '/users', { id: `outer${round}`, workspace_paths: [outer] })),
          read(call(addressB, ROOT_KEY, 'PATCH', `/users/mover${round}`, { workspace_paths: [inner] })),
        ]);
        const refused = [created, moved].filter((answer) => answer.status === 409);
        expect(refused, JSON.stringify([created, moved])).toHaveLength(1);
        expect([created.status, moved.status]).toContain(created === refused[0] ? 200 : 201);
        expect(refused[0]!.body.detail).toBe(`Workspace overlaps another user's: ${created === refused[0] ? outer : inner}`);
      }
    } finally {
      rmSync(scratch, { recursive: true, force: true });
    }
  });
});
