import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { asDatabaseUnavailable, DatabaseUnavailableError } from '../../src/db/unavailable.js';

const caught = async (action: () => unknown): Promise<unknown> => {
  try {
    await action();
  } catch (error) {
    return error;
  }
  throw new Error('expected a failure');
};

describe('asDatabaseUnavailable', () => {
  const dirs: string[] = [];
  afterEach(() => dirs.splice(0).forEach((dir) => rmSync(dir, { recursive: true, force: true })));

  function twoConnections(): [Database.Database, Database.Database] {
    const dir = mkdtempSync(join(tmpdir(), 'mada-busy-'));
    dirs.push(dir);
    const path = join(dir, 'x.db');
    const first = new Database(path);
    first.pragma('journal_mode = WAL');
    first.exec('create table t (v text unique)');
    const second = new Database(path);
    second.pragma('busy_timeout = 0');
    return [first, second];
  }

  it('recognises a SQLite lock held past busy_timeout', async () => {
    const [holder, waiter] = twoConnections();
    holder.exec('begin immediate');
    const error = await caught(() => waiter.prepare("insert into t values ('x')").run());
    holder.exec('rollback');
    expect((error as { code: string }).code).toBe('SQLITE_BUSY');
    expect(asDatabaseUnavailable(error)).toBeInstanceOf(DatabaseUnavailableError);
    holder.close();
    waiter.close();
  });

  it('leaves errors of the request itself alone (a constraint violation)', async () => {
    const [db, other] = twoConnections();
    db.prepare("insert into t values ('x')").run();
    const error = await caught(() => db.prepare("insert into t values ('x')").run());
    expect(asDatabaseUnavailable(error)).toBeUndefined();
    expect(asDatabaseUnavailable(new Error('something else'))).toBeUndefined();
    db.close();
    other.close();
  });

  it('recognises a refused PostgreSQL connection, also wrapped as a cause, and keeps only the driver error for the log', async () => {
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as { port: number };
    await new Promise<void>((resolve) => server.close(() => resolve()));
    const client = new pg.Client({ host: '127.0.0.1', port, user: 'postgres', connectionTimeoutMillis: 2000 });
    const refused = await caught(() => client.connect());
    const wrapped = new Error('Failed query: select * from conversations where id = $1\nparams: secret', { cause: refused });
    const mapped = asDatabaseUnavailable(wrapped);
    expect(mapped?.message).toBe('Database unavailable');
    expect(mapped?.logFields.code).toBe('ECONNREFUSED');
    expect(JSON.stringify(mapped?.logFields)).not.toContain('secret');
  });
});
