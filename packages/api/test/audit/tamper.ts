import Database from 'better-sqlite3';
import pg from 'pg';
import { parseDatabaseUrl } from '../../src/settings.js';
import type { TestDatabase } from '../support/databases.js';

/** Runs one statement on the database behind the service's back, as someone with a SQL shell would. */
export async function bySql(database: TestDatabase, statement: string): Promise<void> {
  const config = parseDatabaseUrl(database.url);
  if (config.dialect === 'sqlite') {
    const db = new Database(config.path);
    try {
      db.exec(statement);
    } finally {
      db.close();
    }
    return;
  }
  const client = new pg.Client({ connectionString: config.url });
  await client.connect();
  try {
    await client.query(statement);
  } finally {
    await client.end();
  }
}
