import type { DatabaseConfig } from '../settings.js';
import { PostgresRepository } from './postgres-repository.js';
import type { ConversationRepository } from './repository.js';
import { statementLogger } from './sql-logger.js';
import { SqliteRepository } from './sqlite-repository.js';

export interface OpenOptions {
  /** Called with each statement when DEBUG is on. */
  logStatement?: (entry: { sql: string; params: unknown[] }) => void;
}

/** Opens the configured database and brings its schema up to date (migrations at start-up). */
export async function openRepository(config: DatabaseConfig, options: OpenOptions = {}): Promise<ConversationRepository> {
  const logger = options.logStatement ? statementLogger(options.logStatement) : undefined;
  return config.dialect === 'sqlite' ? SqliteRepository.open(config.path, logger) : PostgresRepository.open(config.url, logger);
}
