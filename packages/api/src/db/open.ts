import type { DatabaseConfig } from '../settings.js';
import type { ContentSource } from './large-text-worker.js';
import type { DialectAdapter } from './dialect.js';
import { workerLargeTextReader } from './large-content.js';
import { DrizzleRepository } from './drizzle-repository.js';
import { PostgresDialect } from './postgres-dialect.js';
import type { ConversationRepository } from './repository.js';
import { statementLogger } from './sql-logger.js';
import { SqliteDialect } from './sqlite-dialect.js';

export interface OpenOptions {
  /** Called with each statement when DEBUG is on. */
  logStatement?: (entry: { sql: string; params: unknown[] }) => void;
}

/** Opens the configured database and brings its schema up to date (migrations at start-up). */
export async function openRepository(config: DatabaseConfig, options: OpenOptions = {}): Promise<ConversationRepository> {
  const logger = options.logStatement ? statementLogger(options.logStatement) : undefined;
  const adapter: DialectAdapter = config.dialect === 'sqlite' ? SqliteDialect.open(config.path, logger) : await PostgresDialect.open(config.url, logger);
  // Other connections read large texts; an in-memory SQLite database has no other connection.
  const source: ContentSource | undefined =
    config.dialect === 'postgres' ? { dialect: 'postgres', url: config.url } : config.path === ':memory:' ? undefined : { dialect: 'sqlite', path: config.path };
  return new DrizzleRepository(adapter, source && workerLargeTextReader(source));
}
