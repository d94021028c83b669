import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { generateDrizzleJson, generateMigration, generateSQLiteDrizzleJson, generateSQLiteMigration } from 'drizzle-kit/api';
import { describe, expect, it } from 'vitest';
import * as postgresSchema from '../../src/db/schema/tables.js';
import * as sqliteSchema from '../../src/db/schema/sqlite.js';

/*
 * The service migrates with the SQL files drizzle-kit generated, while it queries through the
 * schema: the two must describe the same tables. drizzle-kit compares the schema with the snapshot
 * of the latest migration exactly as `npm run db:generate` does; anything left to migrate is a
 * schema change without its migration.
 */

const MIGRATIONS = fileURLToPath(new URL('../../migrations', import.meta.url));

function latestSnapshot(dialect: 'sqlite' | 'postgres'): Record<string, unknown> & { id: string } {
  const journal = JSON.parse(readFileSync(`${MIGRATIONS}/${dialect}/meta/_journal.json`, 'utf8')) as { entries: { idx: number }[] };
  const last = journal.entries.at(-1)?.idx ?? 0;
  const file = `${MIGRATIONS}/${dialect}/meta/${String(last).padStart(4, '0')}_snapshot.json`;
  return JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown> & { id: string };
}

describe('migrations', () => {
  it('leave nothing of the SQLite schema to migrate', async () => {
    const previous = latestSnapshot('sqlite');
    const current = await generateSQLiteDrizzleJson(sqliteSchema, previous.id);
    expect(await generateSQLiteMigration(previous as never, current)).toEqual([]);
  });

  it('leave nothing of the PostgreSQL schema to migrate', async () => {
    const previous = latestSnapshot('postgres');
    const current = generateDrizzleJson(postgresSchema, previous.id);
    expect(await generateMigration(previous as never, current)).toEqual([]);
  });
});
