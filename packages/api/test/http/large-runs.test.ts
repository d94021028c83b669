import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { startScriptedModel, type ScriptedModel } from '@mada/testkit';
import { afterEach, describe, expect, it } from 'vitest';
import type { NewRun } from '../../src/db/run-repository.js';
import { createTestDatabase, DIALECTS, type TestDatabase } from '../support/databases.js';
import { curl, latenciesWhile, restingLatency } from '../support/large-reads.js';
import { startService, type ServiceProcess } from '../support/service-process.js';

/**
 * A run that ended with a long answer, stored before any limit (here: written straight through the
 * repository): its response and its `response` event hold 32 MiB of whitespace each, its prompt 2 MiB.
 * Eight clients read the run, the list of runs and the replay of its events at once (before the
 * reads went off the event loop, GET / waited 3 to 5 s behind them). The service runs as its own
 * process, so its event loop is its own: other clients' GET / and GET /health must keep answering
 * within a second, and every reader must get the whole run, byte for byte what was stored.
 */

const KEY = 'alice-key-0123456789';
const MIB = 1024 * 1024;

/** Spaces and line breaks, which JSON escapes: the most work per byte for a serializer. */
const blank = (bytes: number, tag: string) => `${tag}${' \n'.repeat(bytes / 2)}${tag}`;

/** The `id:` and `data:` of each Server-Sent Events frame in `text`. */
function frames(text: string): { id: string; data: string }[] {
  return text
    .split('\n\n')
    .filter((frame) => frame.startsWith('id: '))
    .map((frame) => {
      const [id = '', data = ''] = frame.split('\n');
      return { id: id.slice('id: '.length), data: data.slice('data: '.length) };
    });
}

describe.each(DIALECTS)('a run with a 32 MiB answer read by several clients at once on %s', (dialect) => {
  const cleanups: (() => unknown)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  it('keeps GET / and /health answering within a second while its run, the list and its events are read', async () => {
    const workdir = realpathSync(mkdtempSync(join(tmpdir(), 'mada-large-run-')));
    cleanups.push(() => rmSync(workdir, { recursive: true, force: true }));
    const database: TestDatabase = await createTestDatabase(dialect);
    cleanups.push(() => database.drop());

    const runs = database.repository.runs;
    const response = blank(32 * MIB, 'answer');
    const prompt = blank(2 * MIB, 'prompt');
    const events = [JSON.stringify({ event: 'response', data: response }), JSON.stringify({ event: 'done', mode: 'default' })];
    const now = new Date();
    const newRun = (fields: Partial<NewRun>): NewRun => ({
      id: randomUUID(),
      userId: 'alice',
      agentType: 'explore',
      mode: 'default',
      prompt: 'small',
      workingDir: workdir,
      conversationId: null,
      status: 'queued',
      now,
      idempotencyKey: null,
      requestHash: null,
      leaseOwner: 'elsewhere',
      leaseUntil: new Date(now.getTime() + 60_000),
      ...fields,
    });
    const { run } = await runs.createRun(newRun({ prompt, status: 'running', startedAt: now }), { idempotentSince: now });
    await runs.appendActiveEvent(run.id, events[0]!, now);
    await runs.endRun(run.id, events[1]!, now, { status: 'succeeded', response, error: null }, { model_calls: 1, tool_calls: 0, input_tokens: 1, output_tokens: 1 });
    // A small run beside it: a page of runs holds both.
    await runs.createRun(newRun({ now: new Date(now.getTime() - 1000) }), { idempotentSince: now });
    if (dialect === 'sqlite') {
      // Old data is in the database file, not still in the write-ahead log.
      const file = new Database(database.url.slice('sqlite:///'.length));
      file.pragma('wal_checkpoint(TRUNCATE)');
      file.close();
    }

    const model: ScriptedModel = await startScriptedModel();
    cleanups.push(() => model.close());
    const service: ServiceProcess = await startService(
      { DATABASE_URL: database.url, API_KEYS: `alice:${KEY}`, LLM_BASE_URL: model.url, SEARCH_ENGINE_URL: model.url, ALLOWED_PATHS: workdir },
      workdir,
    );
    cleanups.push(() => service.child.kill('SIGKILL'));

    const baseline = await restingLatency(service.url);

    const reads = [...Array<string>(3).fill(`/runs/${run.id}`), ...Array<string>(2).fill('/runs'), ...Array<string>(3).fill(`/runs/${run.id}/events`)];
    const output = (i: number) => join(workdir, `read-${i}`);
    const { result: answers, latencies } = await latenciesWhile(service.url, Promise.all(reads.map((path, i) => curl(`${service.url}${path}`, KEY, output(i)))));
    expect(answers.map((answer) => answer.status)).toEqual(Array<string>(reads.length).fill('200'));

    // Every reader got the whole run, as stored.
    const stored = { id: run.id, prompt, response, error: null, status: 'succeeded', last_event_id: 2 };
    reads.forEach((path, i) => {
      const text = readFileSync(output(i), 'utf8');
      if (path === '/runs') {
        const list = JSON.parse(text) as { runs: { prompt: string }[]; total: number };
        expect(list.total).toBe(2);
        expect(list.runs[0]).toMatchObject(stored);
        expect(list.runs[1]!.prompt).toBe('small');
      } else if (path.endsWith('/events')) {
        expect(frames(text)).toEqual([
          { id: '1', data: events[0] },
          { id: '2', data: events[1] },
        ]);
      } else {
        expect(JSON.parse(text)).toMatchObject(stored);
      }
    });

    // Several checks ran while the clients read, and each answered within a second (or three times
    // the slowest answer at rest, on a machine busy enough to need it).
    expect(latencies.length).toBeGreaterThan(4);
    expect(Math.max(...latencies)).toBeLessThan(Math.max(1000, 3 * baseline));
  }, 120_000);
});
