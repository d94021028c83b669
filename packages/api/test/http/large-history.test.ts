import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { startScriptedModel, type ScriptedModel } from '@mada/testkit';
import { afterEach, describe, expect, it } from 'vitest';
import { createTestDatabase, DIALECTS, type TestDatabase } from '../support/databases.js';
import { curl, latenciesWhile, restingLatency } from '../support/large-reads.js';
import { startService, type ServiceProcess } from '../support/service-process.js';

/**
 * A history stored before MAX_MESSAGE_BYTES existed (here: written straight through the
 * repository), 60 MiB of whitespace, read by six clients at once. The service runs as its own
 * process, so its event loop and its memory are its own: other clients' GET / and GET /health
 * must keep answering, and its resident memory must not grow with the number of readers (two, then six).
 */

const KEY = 'alice-key-0123456789';
const MIB = 1024 * 1024;
const READERS = 6;

/** 60 MiB: one message of 30 MiB, fifteen of 2 MiB, and small ones between; spaces and line breaks, which JSON escapes. */
function history(): string[] {
  const blank = (bytes: number, i: number) => `${i}${' \n'.repeat(bytes / 2)}`;
  const contents = ['hello', blank(30 * MIB, 0)];
  for (let i = 1; i <= 15; i++) contents.push(`question ${i}`, blank(2 * MIB, i));
  return contents;
}

/** Resident memory of a process in bytes (VmRSS), from /proc. */
function residentBytes(pid: number): number {
  const kib = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
  return Number(kib) * 1024;
}

/**
 * `count` readers of the conversation at once, each a curl of its own (the first writes to `firstOutput`),
 * with the service's peak resident memory and the latencies of GET / and /health meanwhile.
 */
async function readAtOnce(service: ServiceProcess, conversationId: string, count: number, firstOutput: string | null) {
  const pid = service.child.pid!;
  let peakMemory = residentBytes(pid);
  const sampler = setInterval(() => (peakMemory = Math.max(peakMemory, residentBytes(pid))), 20);
  const output = (i: number) => (i === 0 && firstOutput !== null ? firstOutput : '/dev/null');
  const readers = Promise.all(Array.from({ length: count }, (_, i) => curl(`${service.url}/conversations/${conversationId}`, KEY, output(i))));
  const { result: answers, latencies } = await latenciesWhile(service.url, readers);
  clearInterval(sampler);
  return { answers, latencies, peakMemory };
}

describe.each(DIALECTS)('a 60 MiB history read by six clients at once on %s', (dialect) => {
  const cleanups: (() => unknown)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  it('keeps GET / and /health answering within a second, and the memory well under what the readers are sent', async () => {
    const workdir = realpathSync(mkdtempSync(join(tmpdir(), 'mada-large-')));
    cleanups.push(() => rmSync(workdir, { recursive: true, force: true }));
    const database: TestDatabase = await createTestDatabase(dialect);
    cleanups.push(() => database.drop());
    const contents = history();
    const conversation = (await database.repository.createConversationWithin(
      { id: randomUUID(), userId: 'alice', agentType: 'explore', title: null, workingDir: workdir, now: new Date() },
      { max: 1, activeSince: null },
    ))!;
    for (const content of contents) {
      await database.repository.appendMessages(conversation.id, [{ id: randomUUID(), role: 'user', content, tokenCount: 1 }], { now: new Date(), titleIfUnset: null });
    }
    if (dialect === 'sqlite') {
      // Old data is in the database file, not still in the write-ahead log (a service checkpointing
      // 60 MiB of log is the write path's cost, not the reads' this test is about).
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
    const pid = service.child.pid!;
    const baseline = await restingLatency(service.url);
    const restingMemory = residentBytes(pid);

    // Two readers first: the most large reads the service holds at once, its worker threads started.
    const few = await readAtOnce(service, conversation.id, 2, null);
    const six = await readAtOnce(service, conversation.id, READERS, join(workdir, 'detail.json'));

    const sent = six.answers.reduce((sum, answer) => sum + answer.bytes, 0);
    expect(six.answers.map((answer) => answer.status)).toEqual(Array<string>(READERS).fill('200'));
    expect(new Set([...few.answers, ...six.answers].map((answer) => answer.bytes)).size).toBe(1);
    const detail = JSON.parse(readFileSync(join(workdir, 'detail.json'), 'utf8')) as { messages: { content: string }[] };
    expect(detail.messages.map((message) => message.content)).toEqual(contents);

    // Several checks ran while the readers read, and each answered within a second (or three times
    // the slowest answer at rest, on a machine busy enough to need it).
    expect(Math.max(...six.latencies)).toBeLessThan(Math.max(1000, 3 * baseline));
    expect(six.latencies.length).toBeGreaterThan(4);
    // The six readers were sent over 500 MB. Four readers more than the first round must not cost
    // the service a share each: with every read let through at once, PostgreSQL's grew by about
    // 600 MiB more than with two readers; with the process-wide turns, by 80-190 MiB of garbage
    // not yet collected.
    expect(sent).toBeGreaterThan(500 * 1e6);
    expect(six.peakMemory - restingMemory).toBeLessThan(few.peakMemory - restingMemory + 250 * MIB);
    expect(six.peakMemory - restingMemory).toBeLessThan(600 * MIB);
  }, 300_000);
});
