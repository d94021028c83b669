import { randomBytes } from 'node:crypto';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { drizzle as sqliteDrizzle } from 'drizzle-orm/better-sqlite3';
import { migrate as sqliteMigrate } from 'drizzle-orm/better-sqlite3/migrator';
import { drizzle as pgDrizzle } from 'drizzle-orm/node-postgres';
import { migrate as pgMigrate } from 'drizzle-orm/node-postgres/migrator';
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { openRepository } from '../../src/db/open.js';
import { TEST_DATABASE_URL } from '../support/databases.js';

/*
 * Upgrading to usage per model (0013): what the runs still stored used of each model is counted,
 * the ledger of totals is left as it was, and runs without a model are in no model's row.
 */

const MIGRATIONS = fileURLToPath(new URL('../../migrations', import.meta.url));
const BEFORE = 12;
const DAY = 86_400_000;
const DAY_ONE = Date.UTC(2026, 10, 27);

/** A dialect's migrations folder as it stood at `last` (journal entries after it left out). */
function migrationsUpTo(dialect: 'sqlite' | 'postgres', last: number): string {
  const dir = mkdtempSync(join(tmpdir(), 'mada-migrations-'));
  cpSync(join(MIGRATIONS, dialect), dir, { recursive: true });
  const journalFile = join(dir, 'meta', '_journal.json');
  const journal = JSON.parse(readFileSync(journalFile, 'utf8')) as { entries: { idx: number }[] };
  writeFileSync(journalFile, JSON.stringify({ ...journal, entries: journal.entries.filter((entry) => entry.idx <= last) }));
  return dir;
}

/** Runs of two users over two days: [id, user, model, created_at, input tokens, output tokens]. */
const RUNS: [string, string, string | null, number, number, number][] = [
  ['00000000-0000-4000-8000-000000000001', 'alice', 'small', DAY_ONE + 1000, 10, 5],
  ['00000000-0000-4000-8000-000000000002', 'alice', 'small', DAY_ONE + 2000, 20, 7],
  ['00000000-0000-4000-8000-000000000003', 'alice', 'large', DAY_ONE + 3000, 100, 50],
  ['00000000-0000-4000-8000-000000000004', 'alice', 'large', DAY_ONE + DAY + 10, 1, 1],
  ['00000000-0000-4000-8000-000000000005', 'alice', null, DAY_ONE + 4000, 3, 3],
  ['00000000-0000-4000-8000-000000000006', 'bob', 'small', DAY_ONE + 5000, 2, 2],
];

/** What 0013 must count: the stored runs that name a model, per user, day and model. */
const EXPECTED = [
  { user_id: 'alice', day: DAY_ONE, model: 'large', runs: 1, tokens: 150 },
  { user_id: 'alice', day: DAY_ONE, model: 'small', runs: 2, tokens: 42 },
  { user_id: 'alice', day: DAY_ONE + DAY, model: 'large', runs: 1, tokens: 2 },
  { user_id: 'bob', day: DAY_ONE, model: 'small', runs: 1, tokens: 4 },
];

/** The ledger of totals before the upgrade: more than the stored runs (some were deleted). */
const LEDGER: [string, number, number, number][] = [
  ['alice', DAY_ONE, 9, 500],
  ['alice', DAY_ONE + DAY, 1, 2],
  ['bob', DAY_ONE, 1, 4],
];

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

describe('upgrading to usage per model (0013)', () => {
  it('on SQLite: counts the stored runs of each model and leaves the totals as they were; /me shows the rest as no model', async () => {
    const old = migrationsUpTo('sqlite', BEFORE);
    const home = mkdtempSync(join(tmpdir(), 'mada-db-'));
    dirs.push(old, home);
    const path = join(home, 'mada.db');
    const client = new Database(path);
    try {
      const db = sqliteDrizzle({ client });
      sqliteMigrate(db, { migrationsFolder: old });
      const run = client.prepare(
        "insert into runs (id, user_id, agent_type, mode, status, prompt, working_dir, model, created_at, input_tokens, output_tokens) values (?, ?, 'explore', 'default', 'succeeded', 'p', '.', ?, ?, ?, ?)",
      );
      for (const row of RUNS) run.run(...row);
      const ledger = client.prepare('insert into user_daily_usage (user_id, day, runs, tokens) values (?, ?, ?, ?)');
      for (const row of LEDGER) ledger.run(...row);

      sqliteMigrate(db, { migrationsFolder: join(MIGRATIONS, 'sqlite') });

      expect(client.prepare('select user_id, day, model, runs, tokens from user_model_daily_usage order by user_id, day, model').all()).toEqual(EXPECTED);
      expect(client.prepare('select user_id, day, runs, tokens from user_daily_usage order by user_id, day').all()).toEqual(LEDGER.map(([user_id, day, runs, tokens]) => ({ user_id, day, runs, tokens })));
    } finally {
      client.close();
    }
    // What the ledger counted beyond the stored runs' models (deleted runs, a run without a model) is shown as model null.
    const repository = await openRepository({ dialect: 'sqlite', path, url: `sqlite:///${path}` });
    try {
      const first = await repository.users.usage('alice', new Date(DAY_ONE + 60_000));
      expect(first).toMatchObject({ runsToday: 10, tokensToday: 502 });
      const day = await repository.users.usage('alice', new Date(DAY_ONE + DAY + 60_000));
      expect(day.byModel).toEqual([{ model: 'large', runs: 1, tokens: 2 }]);
      // Since day one: both days, 10 runs and 502 tokens, of which the stored runs of models make 4 and 194.
      expect(first.byModel).toEqual([
        { model: 'large', runs: 2, tokens: 152 },
        { model: 'small', runs: 2, tokens: 42 },
        { model: null, runs: 6, tokens: 308 },
      ]);
    } finally {
      await repository.close();
    }
  });

  it.skipIf(!TEST_DATABASE_URL)('on PostgreSQL: counts the stored runs of each model and leaves the totals as they were', async () => {
    const name = `mada_test_${randomBytes(6).toString('hex')}`;
    const admin = new pg.Client({ connectionString: TEST_DATABASE_URL });
    await admin.connect();
    try {
      await admin.query(`create database ${name}`);
      const target = new URL(TEST_DATABASE_URL);
      target.pathname = `/${name}`;
      const client = new pg.Client({ connectionString: target.toString() });
      await client.connect();
      try {
        const old = migrationsUpTo('postgres', BEFORE);
        dirs.push(old);
        const db = pgDrizzle({ client });
        await pgMigrate(db, { migrationsFolder: old });
        for (const [id, user, model, createdAt, input, output] of RUNS) {
          await client.query(
            "insert into runs (id, user_id, agent_type, mode, status, prompt, working_dir, model, created_at, input_tokens, output_tokens) values ($1, $2, 'explore', 'default', 'succeeded', 'p', '.', $3, $4, $5, $6)",
            [id, user, model, new Date(createdAt), input, output],
          );
        }
        for (const [user, day, runs, tokens] of LEDGER) await client.query('insert into user_daily_usage (user_id, day, runs, tokens) values ($1, $2, $3, $4)', [user, new Date(day), runs, tokens]);

        await pgMigrate(db, { migrationsFolder: join(MIGRATIONS, 'postgres') });

        const counted = await client.query<{ user_id: string; day: Date; model: string; runs: number; tokens: string }>(
          'select user_id, day, model, runs, tokens from user_model_daily_usage order by user_id, day, model collate "C"',
        );
        // bigint comes back as a string from pg.
        expect(counted.rows.map((row) => ({ ...row, day: row.day.getTime(), tokens: Number(row.tokens) }))).toEqual(EXPECTED);
        const totals = await client.query<{ user_id: string; day: Date; runs: number; tokens: string }>('select user_id, day, runs, tokens from user_daily_usage order by user_id, day');
        expect(totals.rows.map((row) => [row.user_id, row.day.getTime(), row.runs, Number(row.tokens)])).toEqual(LEDGER);
      } finally {
        await client.end();
      }
    } finally {
      await admin.query(`drop database if exists ${name} with (force)`);
      await admin.end();
    }
  });
});
