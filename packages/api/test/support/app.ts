import { mkdtempSync, realpathSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { pino } from 'pino';
import { buildApp } from '../../src/app.js';
import { ConversationService } from '../../src/conversations/service.js';
import { loadSettings, type Settings } from '../../src/settings.js';
import { createTestDatabase, type Dialect, type TestDatabase } from './databases.js';

export interface TestApp {
  app: FastifyInstance;
  settings: Settings;
  conversations: ConversationService;
  database: TestDatabase;
  close(): Promise<void>;
}

export interface TestAppOptions {
  dialect?: Dialect;
  env?: Record<string, string>;
  now?: () => Date;
}

/** The real application on a real database, with dependency probes that need no network. */
export async function createTestApp(options: TestAppOptions = {}): Promise<TestApp> {
  const cwd = realpathSync(mkdtempSync(join(tmpdir(), 'mada-app-')));
  const settings = loadSettings({ LOG_LEVEL: 'silent', ...options.env }, cwd);
  const database = await createTestDatabase(options.dialect ?? 'sqlite');
  const conversations = new ConversationService(database.repository, {
    sessionTtlHours: settings.sessionTtlHours,
    ...(options.now ? { now: options.now } : {}),
  });
  const app = await buildApp({
    settings,
    conversations,
    logger: pino({ level: 'silent' }),
    probes: { dependencies: { model_runtime: async () => 'ok', search_engine: async () => 'ok' } },
  });
  return {
    app,
    settings,
    conversations,
    database,
    close: async () => {
      await app.close();
      await database.drop();
    },
  };
}
