import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { drizzle } from 'drizzle-orm/better-sqlite3';
import { migrate } from 'drizzle-orm/better-sqlite3/migrator';
import { afterEach, describe, expect, it } from 'vitest';

const MIGRATIONS = fileURLToPath(new URL('../../migrations/sqlite', import.meta.url));

/** The migrations folder as it stood at `last` (journal entries after it left out). */
function migrationsUpTo(last: number): string {
  const dir = mkdtempSync(join(tmpdir(), 'mada-migrations-'));
  cpSync(MIGRATIONS, dir, { recursive: true });
  const journalFile = join(dir, 'meta', '_journal.json');
  const journal = JSON.parse(readFileSync(journalFile, 'utf8')) as { entries: { idx: number }[] };
  writeFileSync(journalFile, JSON.stringify({ ...journal, entries: journal.entries.filter((entry) => entry.idx <= last) }));
  return dir;
}

describe('upgrading to one active run per conversation (0005)', () => {
  const dirs: string[] = [];
  afterEach(() => {
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });

  it('upgrades a database whose conversation holds two active runs: the latest keeps running, the others end interrupted', () => {
    const old = migrationsUpTo(4);
    dirs.push(old);
    const client = new Database(':memory:');
    const db = drizzle({ client });
    migrate(db, { migrationsFolder: old });
    client.prepare('insert into conversations (id, user_id, created_at, last_activity_at, busy_token, busy_until) values (?, ?, ?, ?, ?, ?)').run('c1', 'alice', 1, 1, 'r2', 9e12);
    const run = client.prepare("insert into runs (id, user_id, agent_type, mode, status, prompt, working_dir, conversation_id, created_at) values (?, 'alice', 'explore', 'default', ?, 'p', '.', ?, ?)");
    run.run('r1', 'running', 'c1', 1000);
    run.run('r2', 'queued', 'c1', 2000);
    run.run('r0', 'succeeded', 'c1', 500);
    run.run('r3', 'running', null, 1500);

    migrate(db, { migrationsFolder: MIGRATIONS });

    const rows = client.prepare('select id, status, error, ended_at as endedAt from runs order by id').all();
    expect(rows).toEqual([
      { id: 'r0', status: 'succeeded', error: null, endedAt: null },
      { id: 'r1', status: 'interrupted', error: 'Run interrupted: the service stopped', endedAt: 1000 },
      { id: 'r2', status: 'queued', error: null, endedAt: null },
      { id: 'r3', status: 'running', error: null, endedAt: null },
    ]);
    const columns = (client.prepare('pragma table_info(conversations)').all() as { name: string }[]).map((c) => c.name);
    expect(columns).not.toContain('busy_token');
    expect(() => run.run('r4', 'running', 'c1', 3000)).toThrow(/UNIQUE constraint failed: runs\.conversation_id/);
    client.close();
  });
});
