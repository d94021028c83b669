import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { getTableColumns, getTableName, sql, type Column, type Table } from 'drizzle-orm';
import { drizzle } from 'drizzle-orm/better-sqlite3';
import { migrate } from 'drizzle-orm/better-sqlite3/migrator';
import { index, jsonb, pgTable, text, timestamp, uuid } from 'drizzle-orm/pg-core';
import type { SQLiteColumn, SQLiteTable } from 'drizzle-orm/sqlite-core';
import { describe, expect, it } from 'vitest';
import { deriveSqliteTables } from '../../src/db/schema/derive-sqlite.js';
import * as sqliteSchema from '../../src/db/schema/sqlite.js';

/*
 * The SQLite tables are derived from the one schema definition. The statements they build were
 * recorded from the hand-written SQLite schema they replaced (__snapshots__/sqlite-statements.json):
 * any drift in a column's name, type, mode, default or key changes the SQL or its parameters.
 */

const MIGRATIONS = fileURLToPath(new URL('../../migrations/sqlite', import.meta.url));
const tables = Object.values(sqliteSchema as Record<string, unknown>) as SQLiteTable[];

/** One value per column, chosen by the column's TypeScript type, so every mapping is exercised. */
function sampleRow(table: Table): Record<string, unknown> {
  const row: Record<string, unknown> = {};
  for (const [key, column] of Object.entries(getTableColumns(table)) as [string, Column][]) {
    if (column.dataType === 'date') row[key] = new Date(Date.UTC(2026, 1, 1, 10, 0, 0, 123));
    else if (column.dataType === 'boolean') row[key] = true;
    else if (column.dataType === 'number') row[key] = 7;
    else row[key] = `${getTableName(table)}.${column.name}`;
  }
  return row;
}

function statements(table: SQLiteTable) {
  const db = drizzle({ client: new Database(':memory:') });
  const columns = Object.values(getTableColumns(table));
  const [first, second] = columns as [SQLiteColumn, SQLiteColumn];
  const row = sampleRow(table);
  return {
    insert: db.insert(table).values(row).returning().toSQL(),
    insertRequiredOnly: db
      .insert(table)
      .values(Object.fromEntries(Object.entries(getTableColumns(table)).filter(([, c]) => c.notNull && !c.hasDefault).map(([k]) => [k, row[k]])))
      .toSQL(),
    upsert: db.insert(table).values(row).onConflictDoUpdate({ target: first, set: row }).toSQL(),
    select: db.select().from(table).where(eqColumn(first, row)).orderBy(second).limit(3).toSQL(),
    update: db.update(table).set(row).where(eqColumn(first, row)).returning().toSQL(),
    delete: db.delete(table).where(eqColumn(first, row)).toSQL(),
  };
}

function eqColumn(column: Column, row: Record<string, unknown>) {
  const key = Object.entries(getTableColumns(column.table)).find(([, c]) => c === column)?.[0] ?? '';
  return sql`${column} = ${row[key]}`;
}

describe('SQLite schema', () => {
  it('builds the statements the hand-written SQLite schema built', async () => {
    const byName = [...tables].sort((a, b) => getTableName(a).localeCompare(getTableName(b)));
    const recorded = Object.fromEntries(byName.map((table) => [getTableName(table), statements(table)]));
    await expect(JSON.stringify(recorded, null, 2)).toMatchFileSnapshot('./__snapshots__/sqlite-statements.json');
  });

  it('stores and reads back every column unchanged on a migrated database', () => {
    const client = new Database(':memory:');
    const db = drizzle({ client });
    migrate(db, { migrationsFolder: MIGRATIONS });
    // Keys are covered by the migrations check; here only the values' way in and out matters.
    client.pragma('foreign_keys = OFF');
    for (const table of tables) {
      const row = sampleRow(table);
      db.insert(table).values(row).run();
      expect(db.select().from(table).all()).toEqual([row]);
    }
    client.close();
  });

  it('refuses what it cannot give SQLite unchanged, naming the table and column', () => {
    const settings = pgTable('settings', { id: uuid('id').primaryKey(), value: jsonb('value') });
    expect(() => deriveSqliteTables({ settings })).toThrow('settings uses PgJsonb for value');
    const notes = pgTable('notes', { at: timestamp('at', { mode: 'string' }) });
    expect(() => deriveSqliteTables({ notes })).toThrow('notes uses PgTimestampString for at');
    const partial = pgTable('tasks', { body: text('body') }, (t) => [index('tasks_body_idx').on(t.body).where(sql`body <> ''`)]);
    expect(() => deriveSqliteTables({ partial })).toThrow('tasks uses an index option on tasks_body_idx');
  });
});
