import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { drizzle } from 'drizzle-orm/better-sqlite3';
import { migrate } from 'drizzle-orm/better-sqlite3/migrator';
import type { Logger as DrizzleLogger } from 'drizzle-orm/logger';
import type { Db, DialectAdapter, PreparableQuery, PreparedStatement, Statement, Tables } from './dialect.js';
import * as schema from './schema/sqlite.js';
import { ConnectionQueue } from './connection-queue.js';
import { OWN_CHECKPOINT_PAGES, WalCheckpoints } from './wal-checkpoints.js';

const MIGRATIONS = fileURLToPath(new URL('../../migrations/sqlite', import.meta.url));

/**
 * better-sqlite3 stays the driver: it builds from source, it is the fastest SQLite binding for
 * Node, and its synchronous calls finish each statement without a thread hop. Its own transactions
 * cannot span an `await`, so transactions here are BEGIN IMMEDIATE ... COMMIT around the work,
 * and a queue lets one job at a time use the connection, committing transactions queued back to
 * back together (connection-queue.ts). Other processes on the same file wait on SQLite's write
 * lock (busy_timeout); IMMEDIATE takes it up front, so two writers never deadlock upgrading a
 * read lock.
 */
export class SqliteDialect implements DialectAdapter {
  readonly dialect = 'sqlite' as const;
  // Derived from the PostgreSQL schema and typed through it (schema/derive-sqlite.ts).
  readonly tables: Tables = schema;
  private readonly db: Db;
  private readonly queue: ConnectionQueue;
  private readonly statements = new Map<string, Database.Statement>();

  /** Checkpoints of a database file's log, on a worker thread; none for an in-memory database. */
  private readonly checkpoints: WalCheckpoints | undefined;

  private constructor(
    private readonly client: Database.Database,
    path: string,
    private readonly logger?: DrizzleLogger,
  ) {
    this.db = drizzle({ client, ...(logger ? { logger } : {}) }) as unknown as Db;
    if (path !== ':memory:') {
      // The worker checkpoints: this connection only past OWN_CHECKPOINT_PAGES, or as SQLite does by default once the worker failed.
      const ownCheckpoints = client.pragma('wal_autocheckpoint', { simple: true }) as number;
      client.pragma(`wal_autocheckpoint = ${OWN_CHECKPOINT_PAGES}`);
      this.checkpoints = new WalCheckpoints(path, () => client.pragma(`wal_autocheckpoint = ${ownCheckpoints}`));
    }
    this.queue = new ConnectionQueue(client, () => this.checkpoints?.committed());
  }

  static open(path: string, logger?: DrizzleLogger): SqliteDialect {
    if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true });
    const client = new Database(path);
    client.pragma('journal_mode = WAL');
    client.pragma('synchronous = NORMAL');
    client.pragma('foreign_keys = ON');
    client.pragma('busy_timeout = 5000');
    migrate(drizzle({ client }), { migrationsFolder: MIGRATIONS });
    return new SqliteDialect(client, path, logger);
  }

  run<T>(work: (db: Db) => Promise<T>): Promise<T> {
    return this.queue.run(() => work(this.db));
  }

  transaction<T>(work: (tx: Db) => Promise<T>): Promise<T> {
    return this.queue.transaction(() => work(this.db));
  }

  /**
   * The statement is prepared on the first call and kept: the one connection serves every session,
   * so it runs inside a transaction too (the queue gives the connection to one job at a time).
   */
  prepared<R>(name: string, build: (db: Db) => PreparableQuery<R>): PreparedStatement<R> {
    let statement: ReturnType<PreparableQuery<R>['prepare']> | undefined;
    return (_db, values) => {
      statement ??= build(this.db).prepare(name);
      return statement.execute(values);
    };
  }

  query<Row>(statement: Statement, params: readonly unknown[]): Promise<Row[]> {
    return this.queue.run(async () => {
      let prepared = this.statements.get(statement.name);
      if (!prepared) {
        prepared = this.client.prepare(statement.sqlite);
        this.statements.set(statement.name, prepared);
      }
      this.logger?.logQuery(statement.sqlite, [...params]);
      return prepared.all(...params) as Row[];
    });
  }

  async ping(): Promise<void> {
    await this.queue.run(async () => this.client.prepare('select 1').get());
  }

  async close(): Promise<void> {
    // A checkpoint's connection is closed before this one, which then, the last, checkpoints what is left.
    await this.checkpoints?.close();
    // Jobs already queued finish first; closing under them would fail them half-way.
    await this.queue.run(async () => this.client.close());
  }
}
