import { randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { tempDir } from '../../../../test/helpers/temp-dirs.js';
import { openRepository } from '../../src/db/open.js';
import type { ConversationRepository } from '../../src/db/repository.js';
import { parseDatabaseUrl } from '../../src/settings.js';

/** PostgreSQL runs only where TEST_DATABASE_URL is set (.ci/run sets it); SQLite always. */
export const TEST_DATABASE_URL = process.env.TEST_DATABASE_URL ?? '';
export const DIALECTS = TEST_DATABASE_URL ? (['sqlite', 'postgres'] as const) : (['sqlite'] as const);
export type Dialect = 'sqlite' | 'postgres';

export interface TestDatabase {
  repository: ConversationRepository;
  /** A URL other processes can open (a second service, the CLI tests). */
  url: string;
  drop(): Promise<void>;
}

async function adminQuery(query: string): Promise<void> {
  const client = new pg.Client({ connectionString: TEST_DATABASE_URL, connectionTimeoutMillis: 5000 });
  try {
    await client.connect();
  } catch (error) {
    // Set but unreachable must fail the run, never skip it.
    throw new Error(`TEST_DATABASE_URL is set but PostgreSQL does not answer: ${(error as Error).message}`);
  }
  try {
    await client.query(query);
  } finally {
    await client.end();
  }
}

/** A brand-new database (a file, or a PostgreSQL database of its own) with the schema migrated. */
export async function createTestDatabase(dialect: Dialect): Promise<TestDatabase> {
  if (dialect === 'sqlite') {
    // Removed by drop(), or when the file ends for a database a test never dropped.
    const dir = tempDir('mada-db-');
    const url = `sqlite:///${join(dir, 'mada.db')}`;
    const repository = await openRepository({ dialect: 'sqlite', path: join(dir, 'mada.db'), url });
    return { repository, url, drop: async () => (await repository.close(), rmSync(dir, { recursive: true, force: true })) };
  }
  const name = `mada_test_${randomBytes(6).toString('hex')}`;
  await adminQuery(`create database ${name}`);
  const target = new URL(TEST_DATABASE_URL);
  target.pathname = `/${name}`;
  const url = target.toString();
  const repository = await openRepository({ dialect: 'postgres', url });
  return {
    repository,
    url,
    drop: async () => {
      await repository.close();
      await adminQuery(`drop database if exists ${name} with (force)`);
    },
  };
}

/** A second connection to an existing test database, as another service replica would open it. */
export async function openSharedDatabase(of: TestDatabase): Promise<TestDatabase> {
  const config = parseDatabaseUrl(of.url);
  const repository = await openRepository(config);
  return { repository, url: of.url, drop: () => repository.close() };
}
