import { randomUUID } from 'node:crypto';
import { mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { buildApp } from '../packages/api/src/app.js';
import { openRepository } from '../packages/api/src/db/open.js';
import type { ConversationRepository } from '../packages/api/src/db/repository.js';
import { openServices } from '../packages/api/src/services.js';
import { loadSettings } from '../packages/api/src/settings.js';
import { medianMs, result, type Bench } from './harness.js';

/** A database holding `conversations` conversations of the local user, or one with `messages` messages. */
async function seeded(conversations: number, messages = 0) {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), 'mada-bench-')));
  const settings = loadSettings({ LOG_LEVEL: 'silent', RATE_LIMIT_PER_MINUTE: '0' }, dir);
  const repository: ConversationRepository = await openRepository(settings.database);
  const start = Date.parse('2026-01-01T00:00:00Z');
  let lastId = '';
  for (let i = 0; i < conversations; i++) {
    lastId = randomUUID();
    await repository.createConversationWithin({ id: lastId, userId: 'local', agentType: 'task', workingDir: '.', title: `c${i}`, now: new Date(start + i * 1000) }, { max: conversations, activeSince: null });
  }
  for (let i = 0; i < messages; i += 100) {
    const batch = Array.from({ length: Math.min(100, messages - i) }, (_, j) => ({
      id: randomUUID(),
      role: (i + j) % 2 === 0 ? 'user' : 'assistant',
      content: `message ${i + j}: a few words of conversation about src/app.ts`,
      tokenCount: 12,
    }));
    await repository.appendMessages(lastId, batch, { now: new Date(), titleIfUnset: null });
  }
  const logger = pino({ level: 'silent' });
  const services = await openServices({ ...settings, sessionTtlHours: 0 }, logger, { repository, startDir: dir });
  const app = await buildApp({ settings, ...services, logger, probes: { dependencies: {} } });
  return {
    app,
    lastId,
    close: async () => {
      await app.close();
      await repository.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

const get = (app: Awaited<ReturnType<typeof seeded>>['app'], url: string) => async () => {
  const response = await app.inject({ url });
  if (response.statusCode !== 200) throw new Error(`${url}: ${response.statusCode}`);
};

const bench: Bench = async () => {
  const small = await seeded(100);
  const large = await seeded(100_000);
  const listSmall = await medianMs(get(small.app, '/conversations/?limit=50'), 200, 20);
  const listLarge = await medianMs(get(large.app, '/conversations/?limit=50'), 200, 20);
  const deepLarge = await medianMs(get(large.app, '/conversations/?limit=50&offset=5000'), 50, 5);
  await small.close();
  await large.close();

  const ten = await seeded(1, 10);
  const tenThousand = await seeded(1, 10_000);
  const detailTen = await medianMs(get(ten.app, `/conversations/${ten.lastId}`), 100, 10);
  const detailTenThousand = await medianMs(get(tenThousand.app, `/conversations/${tenThousand.lastId}`), 20, 3);
  await ten.close();
  await tenThousand.close();

  return [
    result('list a user’s conversations (first page of 50), 100,000 stored', '100 stored', listSmall, listLarge, 2),
    result('list page at offset 5,000, 100,000 stored', '100 stored, first page', listSmall, deepLarge, undefined, 'deep offsets scan the skipped index entries'),
    result('detail of a conversation with 10,000 messages (SQLite)', '10 messages', detailTen, detailTenThousand, undefined, 'returns every message: linear in the messages by design'),
  ];
};

export default bench;
