import { fileURLToPath } from 'node:url';
import type { Logger as DrizzleLogger } from 'drizzle-orm/logger';
import { drizzle } from 'drizzle-orm/node-postgres';
import { migrate } from 'drizzle-orm/node-postgres/migrator';
import pg from 'pg';
import type { Db, DialectAdapter, PreparableQuery, PreparedStatement, Statement } from './dialect.js';
import * as schema from './schema/tables.js';

const MIGRATIONS = fileURLToPath(new URL('../../migrations/postgres', import.meta.url));

/** Arbitrary but fixed: the advisory lock key that serializes migrations across replicas. */
const MIGRATION_LOCK = 0x6d616461;

/** Several replicas may start at once on one database; only one may migrate at a time. */
async function migrateExclusively(pool: pg.Pool): Promise<void> {
  const client = await pool.connect();
  try {
    await client.query('select pg_advisory_lock($1)', [MIGRATION_LOCK]);
    await migrate(drizzle({ client }), { migrationsFolder: MIGRATIONS });
  } finally {
    await client.query('select pg_advisory_unlock($1)', [MIGRATION_LOCK]).catch(() => undefined);
    client.release();
  }
}

/** A pool of connections; concurrent transactions serialize on the row locks their UPDATEs take. */
export class PostgresDialect implements DialectAdapter {
  readonly dialect = 'postgres' as const;
  readonly tables = schema;
  private readonly db: Db;

  private constructor(
    private readonly pool: pg.Pool,
    private readonly logger?: DrizzleLogger,
  ) {
    this.db = drizzle({ client: pool, ...(logger ? { logger } : {}) });
  }

  static async open(url: string, logger?: DrizzleLogger): Promise<PostgresDialect> {
    const pool = new pg.Pool({ connectionString: url, max: 10, connectionTimeoutMillis: 10_000 });
    // An idle connection dropped by the server (restart, failover) must not crash the process;
    // the pool replaces it and the next query reports any lasting outage.
    pool.on('error', () => undefined);
    // The pool listens only to idle clients: a connection lost while checked out (between a
    // transaction's statements, say) would be an uncaught 'error' and end the process. Its
    // queries fail on their own (503 Database unavailable) and pg-pool discards it on release.
    pool.on('connect', (client) => client.on('error', () => undefined));
    try {
      await migrateExclusively(pool);
    } catch (error) {
      await pool.end();
      throw error;
    }
    return new PostgresDialect(pool, logger);
  }

  run<T>(work: (db: Db) => Promise<T>): Promise<T> {
    return work(this.db);
  }

  transaction<T>(work: (tx: Db) => Promise<T>): Promise<T> {
    return this.db.transaction(work);
  }

  /**
   * Built anew in the session of each call: a transaction runs on its own pooled connection, and a
   * query bound to the pool would run outside it. Sent unnamed, as before, so no connection keeps
   * server-side statements that a schema change (or a pooler between) could invalidate.
   */
  prepared<R>(_name: string, build: (db: Db) => PreparableQuery<R>): PreparedStatement<R> {
    return (db, values) => build(db).execute(values);
  }

  async query<Row>(statement: Statement, params: readonly unknown[]): Promise<Row[]> {
    this.logger?.logQuery(statement.postgres, [...params]);
    const result = await this.pool.query({ text: statement.postgres, values: [...params] });
    return result.rows as Row[];
  }

  async ping(): Promise<void> {
    await this.pool.query('select 1');
  }

  async close(): Promise<void> {
    await this.pool.end();
  }
}
