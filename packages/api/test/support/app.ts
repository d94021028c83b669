import { rmSync } from 'node:fs';
import type { FastifyBaseLogger, FastifyInstance } from 'fastify';
import { pino } from 'pino';
import { afterAll } from 'vitest';
import { tempDir } from '../../../../test/helpers/temp-dirs.js';
import { buildApp } from '../../src/app.js';
import { openServices, type Services } from '../../src/services.js';
import { loadSettings, type Settings } from '../../src/settings.js';
import { createToolHost, type ToolHost } from '../../src/tools/tool-host.js';
import { createTestDatabase, openSharedDatabase, type Dialect, type TestDatabase } from './databases.js';

export interface TestApp extends Services {
  app: FastifyInstance;
  settings: Settings;
  database: TestDatabase;
  /** The service's start directory and only allowed path: a fresh temp dir. */
  workdir: string;
  close(): Promise<void>;
}

export interface TestAppOptions {
  dialect?: Dialect;
  /** Where the service logs (runs, sweeps, start-up); silent by default. */
  logger?: FastifyBaseLogger;
  env?: Record<string, string>;
  now?: () => Date;
  /** Base URL of a scripted model runtime (`@mada/testkit`), and which protocol to speak. */
  model?: { url: string; protocol?: 'ollama' | 'openai' };
  pingIntervalMs?: number;
  /** Another replica's database URL: this app opens its own connection to it and leaves it in place. */
  shareDatabaseOf?: TestApp;
  /** A database the test opened itself (on its own server or file system); dropped on close. */
  database?: TestDatabase;
  /** A host of the test's own (one that must probe afresh); otherwise the file's shared one. */
  toolHost?: ToolHost;
  /** The browser console's files (default: packages/web/dist). */
  consoleDir?: string;
}

function modelEnv(model: TestAppOptions['model']): Record<string, string> {
  if (!model) return { LLM_BASE_URL: 'http://127.0.0.1:9' };
  return model.protocol === 'openai'
    ? { LLM_PROVIDER: 'openai', LLM_BASE_URL: `${model.url}/v1` }
    : { LLM_PROVIDER: 'ollama', LLM_BASE_URL: model.url };
}

/**
 * One probed host for the test apps of a file (a process), as a service has one for its life:
 * probing the sandbox starts bubblewrap and slirp4netns, which every app paid again otherwise.
 * Each app still has its own workdir, so the repository census of one never meets another's.
 */
const sharedToolHost: ToolHost = createToolHost();
// A test file's last test ends its threads; the benches that import this end with their process.
if (process.env.VITEST !== undefined) afterAll(() => sharedToolHost.gitlinks.close());

/** The real application on a real database, with dependency probes that need no network. */
export async function createTestApp(options: TestAppOptions = {}): Promise<TestApp> {
  // Removed by close(), or when the file ends for an app a test never closed (it failed first).
  const workdir = tempDir('mada-app-');
  const settings = loadSettings(
    { LOG_LEVEL: 'silent', RETRY_BASE_DELAY: '0.01', RETRY_MAX_DELAY: '0.05', ...modelEnv(options.model), ...options.env },
    workdir,
  );
  const database =
    options.database ??
    (options.shareDatabaseOf ? await openSharedDatabase(options.shareDatabaseOf.database) : await createTestDatabase(options.dialect ?? 'sqlite'));
  const logger = options.logger ?? pino({ level: 'silent' });
  const services = await openServices(settings, logger, {
    repository: database.repository,
    startDir: workdir,
    toolHost: options.toolHost ?? sharedToolHost,
    ...(options.now ? { now: options.now } : {}),
  });
  const app = await buildApp({
    settings,
    ...services,
    logger,
    ...(options.pingIntervalMs === undefined ? {} : { pingIntervalMs: options.pingIntervalMs }),
    ...(options.consoleDir === undefined ? {} : { consoleDir: options.consoleDir }),
    probes: { dependencies: { model_runtime: async () => 'ok', search_engine: async () => 'ok' } },
  });
  return {
    ...services,
    app,
    settings,
    database,
    workdir,
    close: async () => {
      await app.close();
      await services.close();
      await database.drop();
      // Hundreds of apps a run: each takes its temp directory with it.
      rmSync(workdir, { recursive: true, force: true });
    },
  };
}

/** Two services on one PostgreSQL database (replicas), each listening on loopback. */
export interface Replicas {
  a: TestApp;
  b: TestApp;
  addressA: string;
  addressB: string;
  close(): Promise<void>;
}

export async function startReplicas(env: Record<string, string>): Promise<Replicas> {
  const database = await createTestDatabase('postgres');
  // DATABASE_URL as a deployment sets it: each replica's event bus then LISTENs on the database.
  const shared = { DATABASE_URL: database.url, ...env };
  const a = await createTestApp({ env: shared, database });
  const b = await createTestApp({ env: shared, shareDatabaseOf: a });
  const addressA = await a.app.listen({ port: 0, host: '127.0.0.1' });
  const addressB = await b.app.listen({ port: 0, host: '127.0.0.1' });
  return {
    a,
    b,
    addressA,
    addressB,
    close: async () => {
      await b.close();
      await a.close();
    },
  };
}
