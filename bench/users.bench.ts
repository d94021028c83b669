import { mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { buildApp } from '../packages/api/src/app.js';
import { openRepository } from '../packages/api/src/db/open.js';
import { openServices } from '../packages/api/src/services.js';
import { loadSettings } from '../packages/api/src/settings.js';
import { newKey } from '../packages/api/src/users/api-keys.js';
import { interleavedMediansMs, result, type Bench } from './harness.js';

const CONFIGURED_KEY = 'bench-configured-key-4f2a9c';
/** Stored users besides the one measured: a lookup must not grow with them. */
const OTHER_USERS = 1000;
/** Requests per sample: a sample spans the key cache's 0.5 s lifetime, so its lookups count too. */
const REQUESTS = 300;

/**
 * An authenticated request with a stored key (found by digest, cached for 0.5 s) against the same
 * request with a key of API_KEYS (compared in memory), on SQLite.
 */
const bench: Bench = async () => {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), 'mada-bench-users-')));
  const settings = loadSettings({ LOG_LEVEL: 'silent', RATE_LIMIT_PER_MINUTE: '0', API_KEYS: `root:${CONFIGURED_KEY}` }, dir);
  const repository = await openRepository(settings.database);
  const user = (id: string) => ({ id, role: 'member' as const, disabled: false, createdAt: new Date(), workspacePaths: '[]', maxConcurrentRuns: 0, maxRunsPerDay: 0, maxTokensPerDay: 0 });
  for (let i = 0; i < OTHER_USERS; i++) await repository.users.createUser(user(`user-${i}`), newKey(`user-${i}`, 'k', new Date()).record, 'system');
  const stored = newKey('alice', 'bench', new Date());
  await repository.users.createUser(user('alice'), stored.record, 'system');
  const logger = pino({ level: 'silent' });
  const services = await openServices(settings, logger, { repository, startDir: dir });
  const app = await buildApp({ settings, ...services, logger, probes: { dependencies: {} } });
  const requests = (key: string) => async () => {
    for (let i = 0; i < REQUESTS; i++) {
      const response = await app.inject({ url: '/agents/', headers: { 'x-api-key': key } });
      if (response.statusCode !== 200) throw new Error(`GET /agents/: ${response.statusCode}`);
    }
  };
  try {
    const { baselineMs, subjectMs } = await interleavedMediansMs(requests(CONFIGURED_KEY), requests(stored.key), 15, 2);
    return [
      result(
        `authenticated request with a stored key (${OTHER_USERS + 1} stored users, SQLite)`,
        'a key of API_KEYS',
        baselineMs / REQUESTS,
        subjectMs / REQUESTS,
        1.1,
        'GET /agents/; the stored key is looked up by its digest at most every 0.5 s',
      ),
    ];
  } finally {
    await app.close();
    await services.close();
    await repository.close();
    rmSync(dir, { recursive: true, force: true });
  }
};

export default bench;
