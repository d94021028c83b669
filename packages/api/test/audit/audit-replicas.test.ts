import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startReplicas, type Replicas } from '../support/app.js';
import { TEST_DATABASE_URL } from '../support/databases.js';

const ROOT_KEY = 'root-key-7a4c1e8f20b6';

/** Two services on one PostgreSQL database appending at once keep one chain: no fork, no gap. */
describe.skipIf(!TEST_DATABASE_URL)('the audit log across replicas on postgres', () => {
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

  const post = (address: string, path: string, body: object) =>
    fetch(`${address}${path}`, { method: 'POST', headers: { 'x-api-key': ROOT_KEY, 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const get = async (path: string): Promise<Record<string, unknown>> =>
    (await (await fetch(`${addressB}${path}`, { headers: { 'x-api-key': ROOT_KEY } })).json()) as Record<string, unknown>;

  it('serializes concurrent appends from both replicas into one contiguous, verified chain', async () => {
    // Each creation appends user.created and key.created in one transaction, from both replicas at once.
    const made = await Promise.all(
      Array.from({ length: 24 }, (_, i) => post(i % 2 === 0 ? addressA : addressB, '/users', { id: `u${i}` }).then((r) => r.status)),
    );
    expect(made).toEqual(Array.from({ length: 24 }, () => 201));
    const keys = await Promise.all(Array.from({ length: 24 }, (_, i) => post(i % 2 === 0 ? addressB : addressA, `/users/u${i}/keys`, { name: 'k' }).then((r) => r.status)));
    expect(keys).toEqual(Array.from({ length: 24 }, () => 201));
    const page = await get('/audit?limit=1000');
    const seqs = (page.entries as { seq: number }[]).map((e) => e.seq);
    // Two service.started, then 24 users and 24 keys.
    expect(seqs).toEqual(Array.from({ length: 50 }, (_, i) => i + 1));
    expect(await get('/audit/verify')).toEqual({ ok: true, entries: 50, first_bad_seq: null });
  });
});
