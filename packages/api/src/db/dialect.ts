import type { NodePgQueryResultHKT } from 'drizzle-orm/node-postgres';
import type { PgDatabase } from 'drizzle-orm/pg-core';
import type * as tables from './schema/postgres.js';

/**
 * The query builder the one repository is written against. drizzle has no dialect-neutral builder
 * type, so both dialects present themselves through the PostgreSQL one: schema/types.ts proves at
 * compile time that both schemas give rows of identical types, and the repository keeps to the
 * builder calls both dialects share (select, insert ... on conflict, update/delete ... returning),
 * which the same test suite checks on both databases.
 */
export type Db = PgDatabase<NodePgQueryResultHKT>;
export type Tables = typeof tables;

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
  ping(): Promise<void>;
  close(): Promise<void>;
}
