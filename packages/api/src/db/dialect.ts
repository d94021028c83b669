import type { NodePgQueryResultHKT } from 'drizzle-orm/node-postgres';
import type { PgDatabase } from 'drizzle-orm/pg-core';
import type * as tables from './schema/tables.js';

/**
 * The query builder the one repository is written against. drizzle has no dialect-neutral builder
 * type, so both dialects present themselves through the PostgreSQL one: the SQLite tables are
 * derived from the PostgreSQL schema with column types that read back the same values
 * (schema/derive-sqlite.ts), and the repository keeps to the
 * builder calls both dialects share (select, insert ... on conflict, update/delete ... returning),
 * which the same test suite checks on both databases.
 */
export type Db = PgDatabase<NodePgQueryResultHKT>;
export type Tables = typeof tables;

/**
 * A query whose SQL never changes, the values that do being `sql.placeholder`s: the statements a
 * run repeats for every event it stores and every follower it wakes.
 */
export interface PreparableQuery<R> {
  prepare(name: string): { execute(values?: Record<string, unknown>): Promise<R> };
  execute(values?: Record<string, unknown>): Promise<R>;
}

/** Runs a PreparableQuery with its placeholder values in the session given (a transaction's, or the plain one). */
export type PreparedStatement<R> = (db: Db, values: Record<string, unknown>) => Promise<R>;

/**
 * A statement written out for each dialect (`?` parameters for SQLite, `$1`... for PostgreSQL),
 * for reads that need what drizzle's builder does not share across dialects (SQLite's group_concat,
 * PostgreSQL's string_agg).
 */
export interface Statement {
  /** Unique per statement: SQLite keeps its prepared statement under it (PostgreSQL sends it unnamed). */
  readonly name: string;
  readonly sqlite: string;
  readonly postgres: string;
}

/** What differs between SQLite and PostgreSQL: the connection, its sessions and its transactions. */
export interface DialectAdapter {
  readonly dialect: 'sqlite' | 'postgres';
  readonly tables: Tables;
  /** Statements outside a transaction. */
  run<T>(work: (db: Db) => Promise<T>): Promise<T>;
  /**
   * All or nothing. Concurrent transactions on one row serialize: on PostgreSQL through the row
   * lock its first UPDATE takes, on SQLite because its one connection runs one job at a time.
   */
  transaction<T>(work: (tx: Db) => Promise<T>): Promise<T>;
  /**
   * A statement for the hot paths. SQLite builds and prepares it once (building and preparing cost
   * more than running it); PostgreSQL builds it in each call's own session, as a transaction needs.
   */
  prepared<R>(name: string, build: (db: Db) => PreparableQuery<R>): PreparedStatement<R>;
  /** One Statement outside a transaction, prepared once; rows as the driver gives them (column names as written). */
  query<Row>(statement: Statement, params: readonly unknown[]): Promise<Row[]>;
  ping(): Promise<void>;
  close(): Promise<void>;
}

/**
 * Statements built once per adapter, for functions that are handed the adapter rather than owning
 * it (what a transaction of another repository calls, such as the audit log's append).
 */
export function perAdapter<S>(build: (adapter: DialectAdapter) => S): (adapter: DialectAdapter) => S {
  const built = new WeakMap<DialectAdapter, S>();
  return (adapter) => {
    let statements = built.get(adapter);
    if (statements === undefined) built.set(adapter, (statements = build(adapter)));
    return statements;
  };
}
