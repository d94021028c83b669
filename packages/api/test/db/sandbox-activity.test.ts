import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { OtherActivityRecord } from '../../src/db/sandbox-activity.js';
import { createTestDatabase, DIALECTS, openSharedDatabase, TEST_DATABASE_URL, type TestDatabase } from '../support/databases.js';

/*
 * The replicas' records of their `bash` commands and first censuses (db/sandbox-activity.ts), on
 * one PostgreSQL database through two connections, as two replicas hold it. What the sandbox relies
 * on: of a command and a census registering at the same moment, one always sees the other.
 */

describe.each(DIALECTS)('sandbox activities (%s)', (dialect) => {
  let database: TestDatabase;

  beforeAll(async () => {
    database = await createTestDatabase(dialect);
  });
  afterAll(async () => {
    await database.drop();
  });

  it(dialect === 'sqlite' ? 'are not kept on SQLite: one process coordinates within itself' : 'are kept on PostgreSQL', () => {
    expect(database.repository.sandboxActivity === undefined).toBe(dialect === 'sqlite');
  });
});

describe.skipIf(!TEST_DATABASE_URL)('sandbox activities across two replicas', () => {
  let database: TestDatabase;
  let shared: TestDatabase;

  beforeAll(async () => {
    database = await createTestDatabase('postgres');
    shared = await openSharedDatabase(database);
  });
  afterAll(async () => {
    await shared?.drop();
    await database?.drop();
  });

  const record = (kind: 'command' | 'census', roots: string[]) => ({ id: randomUUID(), kind, roots, ttlMs: 60_000 });

  it('of a command and a census registering at once over one directory, one always sees the other', async () => {
    const a = database.repository.sandboxActivity!;
    const b = shared.repository.sandboxActivity!;
    // Ten pairs at a time (a pool's connections), each over a directory of its own.
    for (let round = 0; round < 10; round++) {
      const pairs = Array.from({ length: 10 }, (_, pair) => {
        const root = `/srv/${round}-${pair}`;
        return { root, command: record('command', [root]), census: record('census', [`${root}/vendor`]) };
      });
      const outcomes = await Promise.all(
        pairs.map(async ({ root, command, census }) => {
          const covers = (others: OtherActivityRecord[]): boolean => others.some((other) => other.roots.some((path) => path.startsWith(root)));
          const [commanded, censused] = await Promise.all([a.register(command, covers), b.register(census, () => false)]);
          await Promise.all([a.end(command.id), b.end(census.id)]);
          // Either the command held back, having seen the census, or the census saw the command.
          return !commanded.registered || covers(censused.others);
        }),
      );
      expect(outcomes.every(Boolean)).toBe(true);
    }
  });

  it('sees only the other replica\'s live records, and a path as its bytes', async () => {
    const a = database.repository.sandboxActivity!;
    const b = shared.repository.sandboxActivity!;
    // Every character one byte: a name that is not UTF-8 comes back as it went in.
    const odd = '/srv/caf\u00e9\u00ff\u0001';
    const mine = record('command', [odd]);
    await a.register(mine, () => false);
    expect(await a.live('command')).toEqual([]);
    expect(await b.live('command')).toEqual([[odd]]);
    // A registration reads the others' records of both kinds, with their ages.
    const later = record('census', ['/srv/other']);
    const { others } = await b.register(later, () => false);
    expect(others.map(({ kind, roots }) => ({ kind, roots }))).toEqual([{ kind: 'command', roots: [odd] }]);
    expect(others[0]!.ageMs).toBeGreaterThanOrEqual(0);
    expect(others[0]!.ageMs).toBeLessThan(10_000);
    await b.end(later.id);
    await a.end(mine.id);
    expect(await b.live('command')).toEqual([]);
    const lapsing = { ...record('census', ['/srv/gone']), ttlMs: 1 };
    await b.register(lapsing, () => false);
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(await a.live('census')).toEqual([]);
  });
});
