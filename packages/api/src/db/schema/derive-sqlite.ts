import { Column, getTableColumns, is, SQL } from 'drizzle-orm';
import { getTableConfig, IndexedColumn, type PgColumn, type PgTable, PgVarchar } from 'drizzle-orm/pg-core';
import {
  foreignKey,
  index,
  integer,
  primaryKey,
  type SQLiteColumn,
  type SQLiteColumnBuilderBase,
  sqliteTable,
  type SQLiteTable,
  type SQLiteTableExtraConfigValue,
  text,
  uniqueIndex,
} from 'drizzle-orm/sqlite-core';

/*
 * drizzle builds tables per dialect, so the schema is written once, with the PostgreSQL builders
 * (tables.ts), and SQLite's tables are derived from it here: the same names, columns, keys,
 * defaults and indexes, each column given the SQLite type that reads back the same TypeScript
 * value (a timestamp as epoch milliseconds, which keeps ordering exact; a boolean as 0/1).
 * Anything this does not know how to carry over stops the service at start-up (and every test)
 * instead of quietly giving SQLite a different table.
 */

type ColumnBuilder = ReturnType<typeof text> | ReturnType<typeof integer>;

function unsupported(table: string, what: string): Error {
  return new Error(`schema: ${table} uses ${what}, which the SQLite tables cannot carry over (schema/derive-sqlite.ts)`);
}

/** The SQLite column that stores what the PostgreSQL column does, as the same TypeScript type. */
function sqliteType(table: string, column: PgColumn): ColumnBuilder {
  if (column.enumValues?.length) throw unsupported(table, `an enum on ${column.name}`);
  switch (column.columnType) {
    case 'PgUUID':
    case 'PgText':
      return text(column.name);
    case 'PgVarchar':
      if (is(column, PgVarchar)) return text(column.name, { length: column.length });
      break;
    // SQLite's integers are 64-bit already; read as JS numbers, like bigint's 'number' mode (exact below 2^53).
    case 'PgInteger':
    case 'PgBigInt53':
      return integer(column.name);
    case 'PgBoolean':
      return integer(column.name, { mode: 'boolean' });
    case 'PgTimestamp':
      // The Date mode only: a string-mode timestamp (PgTimestampString) would read back as another type.
      return integer(column.name, { mode: 'timestamp_ms' });
  }
  throw unsupported(table, `${column.columnType} for ${column.name}`);
}

function sqliteColumn(table: string, column: PgColumn): ColumnBuilder {
  if (column.defaultFn || column.onUpdateFn || column.generated || column.generatedIdentity || column.isUnique) {
    throw unsupported(table, `a generated, unique or client-side default on ${column.name}`);
  }
  if (is(column.default, SQL)) throw unsupported(table, `an SQL default on ${column.name}`);
  let builder = sqliteType(table, column);
  if (column.primary) builder = builder.primaryKey();
  else if (column.notNull) builder = builder.notNull();
  if (column.default !== undefined) builder = builder.default(column.default as never);
  return builder;
}

/**
 * Each PostgreSQL table given as its SQLite counterpart. The result keeps the PostgreSQL types,
 * through which the one repository reads and writes both dialects (dialect.ts); the column types
 * above are what makes that sound, and test/db/sqlite-schema.test.ts holds the statements built.
 */
/**
 * A partial index's condition that names its columns through the schema, all of them the table's
 * own: drizzle renders those for either dialect. A condition written as text alone is refused, as
 * nothing says it means the same to SQLite.
 */
function overOwnColumns(where: SQL, table: PgTable): boolean {
  const columns = where.queryChunks.filter((chunk) => is(chunk, Column));
  return columns.length > 0 && columns.every((column) => column.table === table);
}

export function deriveSqliteTables<T extends Record<string, PgTable>>(tables: T): T {
  const derived = new Map<PgTable, SQLiteTable>();
  const columnOf = (column: { table: PgTable; name: string }): SQLiteColumn => {
    const target = derived.get(column.table);
    const found = target && Object.values(getTableColumns(target)).find((c) => c.name === column.name);
    if (!found) throw new Error(`schema: no SQLite column for ${column.name}`);
    return found;
  };

  for (const table of Object.values(tables)) {
    const config = getTableConfig(table);
    const { name } = config;
    if (config.schema || config.checks.length || config.uniqueConstraints.length || config.policies.length || config.enableRLS) {
      throw unsupported(name, 'a schema, check, unique constraint or row-level security');
    }
    const columns: Record<string, SQLiteColumnBuilderBase> = {};
    for (const [key, column] of Object.entries(getTableColumns(table))) columns[key] = sqliteColumn(name, column);

    const indexes = config.indexes.map(({ config: ix }) => {
      if (!ix.name || ix.concurrently || ix.only || ix.with || ix.method !== 'btree' || (ix.where && !overOwnColumns(ix.where, table))) {
        throw unsupported(name, `an index option on ${ix.name ?? 'an unnamed index'}`);
      }
      const on = ix.columns.map((c) => {
        const plain = is(c, IndexedColumn) && c.indexConfig?.order !== 'desc' && c.indexConfig?.nulls !== 'first' && !c.indexConfig?.opClass;
        if (!plain) throw unsupported(name, `an expression or ordering in ${ix.name}`);
        return c.name ?? '';
      });
      return { name: ix.name, unique: ix.unique, on, where: ix.where };
    });

    const extra = (): SQLiteTableExtraConfigValue[] => {
      const own = (columnName: string) => columnOf({ table, name: columnName });
      return [
        ...indexes.map((ix) => {
          const [first, ...rest] = ix.on.map(own) as [SQLiteColumn, ...SQLiteColumn[]];
          const built = (ix.unique ? uniqueIndex(ix.name) : index(ix.name)).on(first, ...rest);
          // A partial index's condition is plain SQL over the table's own columns, the same in both dialects.
          return ix.where ? built.where(ix.where) : built;
        }),
        ...config.primaryKeys.map((pk) => {
          const [first, ...rest] = pk.columns.map((c) => own(c.name)) as [SQLiteColumn, ...SQLiteColumn[]];
          return primaryKey({ ...(pk.name ? { name: pk.name } : {}), columns: [first, ...rest] });
        }),
        ...config.foreignKeys.map((fk) => {
          const key = foreignKey(() => {
            const ref = fk.reference();
            const [first, ...rest] = ref.columns.map((c) => own(c.name)) as [SQLiteColumn, ...SQLiteColumn[]];
            const [foreignFirst, ...foreignRest] = ref.foreignColumns.map(columnOf) as [SQLiteColumn, ...SQLiteColumn[]];
            return { ...(ref.name ? { name: ref.name } : {}), columns: [first, ...rest], foreignColumns: [foreignFirst, ...foreignRest] };
          });
          if (fk.onDelete) key.onDelete(fk.onDelete);
          if (fk.onUpdate) key.onUpdate(fk.onUpdate);
          return key;
        }),
      ];
    };
    derived.set(table, sqliteTable(name, columns, extra));
  }

  return Object.fromEntries(Object.entries(tables).map(([key, table]) => [key, derived.get(table)])) as unknown as T;
}
