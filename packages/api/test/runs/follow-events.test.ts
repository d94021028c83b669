import { randomUUID } from 'node:crypto';
import Database from 'better-sqlite3';
import pg from 'pg';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { RunEventRecord, RunRepository } from '../../src/db/run-repository.js';
import { LocalEventBus } from '../../src/runs/event-bus.js';
import { followRunEvents, seenRun } from '../../src/runs/follow-events.js';
import { createTestDatabase, DIALECTS, type TestDatabase } from '../support/databases.js';
import { parseEventFrames } from '../support/run-events.js';

const T0 = new Date('2026-02-01T10:00:00.000Z');
const chunk = (n: number): string => `{"event":"chunk","data":"part ${n} "}`;
const DONE = '{"event":"done","mode":"default"}';
const NO_USAGE = { model_calls: 0, tool_calls: 0, input_tokens: 0, output_tokens: 0 };

/**
 * The follower behind GET /runs/{id}/events against a real store, with the in-process bus. The bus
 * may hand over each stored event with its signal; whatever it hands over (or fails to), the
 * follower delivers every stored event once, in order, and stops after the last.
 */
describe.each(DIALECTS)('following a run on %s', (dialect) => {
  let db: TestDatabase;
  let runs: RunRepository;
  let bus: LocalEventBus;
  let runId: string;

  beforeEach(async () => {
    db = await createTestDatabase(dialect);
    runs = db.repository.runs;
    bus = new LocalEventBus();
    runId = randomUUID();
    await runs.createRun(
      {
        id: runId,
        userId: 'alice',
        agentType: 'plan',
        mode: 'default',
        prompt: 'plan the release',
        workingDir: '/srv/app',
        conversationId: null,
        status: 'running',
        now: T0,
        idempotencyKey: null,
        requestHash: null,
        leaseOwner: 'replica-a',
        leaseUntil: new Date(T0.getTime() + 60_000),
      },
      { idempotentSince: T0 },
    );
  });
  afterEach(async () => {
    await bus.close();
    await db.drop();
  });

  /** Stores an event, then signals it the way `announce` says; returns the stored record. */
  const store = async (data: string, announce: 'with event' | 'bare' | 'silent'): Promise<RunEventRecord> => {
    const stored =
      data === DONE
        ? (await runs.endRun(runId, data, T0, { status: 'succeeded', response: null, error: null }, NO_USAGE))?.event
        : await runs.appendActiveEvent(runId, data, T0);
    if (!stored) throw new Error('the run refused the event');
    if (announce === 'with event') await bus.publish(runId, stored);
    if (announce === 'bare') await bus.publish(runId);
    return stored;
  };

  const follow = (after = 0) => {
    const delivered: { seq: number; data: string }[] = [];
    let gotSome!: () => void;
    const firstDelivery = new Promise<void>((resolve) => (gotSome = resolve));
    const finished = followRunEvents({
      store: runs,
      bus,
      runId,
      after,
      withIds: true,
      signal: new AbortController().signal,
      deliver: async (frames) => {
        delivered.push(...parseEventFrames(frames.toString()).map((frame) => ({ seq: frame.id, data: frame.data })));
        gotSome();
      },
    });
    return { delivered, firstDelivery, finished };
  };

  const seqs = (events: readonly { seq: number }[]): number[] => events.map((event) => event.seq);

  it('delivers events handed over with their signal exactly as stored, once each, and stops after the last', async () => {
    await store(chunk(1), 'with event');
    const follower = follow();
    await follower.firstDelivery;
    for (let n = 2; n <= 30; n++) await store(chunk(n), 'with event');
    await store(DONE, 'with event');
    await follower.finished;

    const stored = await runs.eventsAfter(runId, 0, 100);
    expect(seqs(follower.delivered)).toEqual(Array.from({ length: 31 }, (_, i) => i + 1));
    expect(follower.delivered.map((event) => event.data)).toEqual(stored.map((event) => event.data));
  });

  it('reads the store when a signal comes without its event or an event was never signalled', async () => {
    const follower = follow();
    await store(chunk(1), 'with event');
    await follower.firstDelivery;
    // Event 2 is stored without a word; event 3's signal carries it, so 2 is missing before it.
    await store(chunk(2), 'silent');
    await store(chunk(3), 'with event');
    // A bare signal (another replica's NOTIFY, an approval decided) says nothing of what is stored.
    await store(chunk(4), 'bare');
    await store(DONE, 'with event');
    await follower.finished;

    expect(seqs(follower.delivered)).toEqual([1, 2, 3, 4, 5]);
    expect(follower.delivered.at(-1)?.data).toBe(DONE);
  });

  it('starts after the id it is given and gets the rest from the store, however signals arrive meanwhile', async () => {
    for (let n = 1; n <= 5; n++) await store(chunk(n), 'silent');
    const follower = follow(3);
    const signalled = [store(chunk(6), 'with event'), store(chunk(7), 'with event')];
    await Promise.all(signalled);
    await store(DONE, 'with event');
    await follower.finished;

    expect(seqs(follower.delivered)).toEqual([4, 5, 6, 7, 8]);
  });

  it('follows a run seen active without reading its pages or its row, and still ends with it', async () => {
    const reads: string[] = [];
    // The real store, with its reads counted.
    const counted = new Proxy(runs, {
      get: (target, name, receiver) => {
        const value: unknown = Reflect.get(target, name, receiver);
        if (typeof value !== 'function') return value;
        return (...args: unknown[]) => {
          reads.push(String(name));
          return (value as (...a: unknown[]) => unknown).apply(target, args);
        };
      },
    });
    const seen = seenRun((await runs.findRun(runId))!);
    const delivered: number[] = [];
    const finished = followRunEvents({
      store: counted,
      bus,
      runId,
      after: 0,
      withIds: true,
      seen,
      signal: new AbortController().signal,
      deliver: async (frames) => void delivered.push(...parseEventFrames(frames.toString()).map((frame) => frame.id)),
    });
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(reads).toEqual(['eventFramesAfter']);
    await store(chunk(1), 'with event');
    await store(DONE, 'with event');
    await finished;
    expect(delivered).toEqual([1, 2]);
    expect(reads).not.toContain('viewRun');
    expect(reads).not.toContain('eventPagesAfter');
  });

  it('still asks for the run when the id it starts after is past what was seen', async () => {
    await store(chunk(1), 'silent');
    const seen = seenRun((await runs.findRun(runId))!);
    // The run ends after it was seen, with its last event at the id the client asks to start after.
    await store(DONE, 'silent');
    const follower = followRunEvents({
      store: runs,
      bus,
      runId,
      after: 2,
      withIds: true,
      seen,
      signal: new AbortController().signal,
      deliver: async () => undefined,
    });
    // Without a look at the run's row this would wait for a signal that never comes.
    await expect(Promise.race([follower.then(() => 'ended'), new Promise((resolve) => setTimeout(() => resolve('waiting'), 2000))])).resolves.toBe('ended');
  });

  it('stops at once when its client goes away while it asks the store whether the run is still on', async () => {
    let asked!: () => void;
    const asking = new Promise<void>((resolve) => (asked = resolve));
    let answer!: () => void;
    const answered = new Promise<void>((resolve) => (answer = resolve));
    // The store's answer is held back until the client has gone, as a slow database would.
    const slowStore: RunRepository = Object.assign(Object.create(runs) as RunRepository, {
      viewRun: async (id: string) => {
        asked();
        await answered;
        return runs.viewRun(id);
      },
    });
    const client = new AbortController();
    const started = Date.now();
    const finished = followRunEvents({ store: slowStore, bus, runId, after: 0, withIds: true, signal: client.signal, deliver: async () => undefined });
    await asking;
    client.abort();
    answer();
    await finished;

    // The bus's own poll (a minute in one process) would otherwise be what ends it.
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  it('replays a long run with large events exactly, never handing over more than about 1 MiB at a time', async () => {
    // A long run's stored pages stop before its 1.5 MiB event; from there events are read row by
    // row, and each large one (the 400 KiB one too) a slice at a time.
    const texts = Array.from({ length: 1100 }, (_, i) => {
      const big = i === 499 ? 1536 * 1024 : i === 799 ? 400 * 1024 : 0;
      return `{"event":"chunk","data":"${big ? 'x'.repeat(big) : `part ${i + 1}`}"}`;
    });
    for (const text of texts) await runs.appendActiveEvent(runId, text, T0);
    await runs.endRun(runId, DONE, T0, { status: 'succeeded', response: null, error: null }, NO_USAGE);
    // Its stored pages end before the large event, which was never joined into one.
    expect((await runs.eventPagesAfter(runId, 0, 100)).at(-1)?.lastSeq).toBe(499);
    const all = [...texts, DONE].map((data, i) => ({ id: i + 1, data }));
    for (const after of [0, 700]) {
      let text = '';
      let largest = 0;
      await followRunEvents({
        store: runs,
        bus,
        runId,
        after,
        withIds: true,
        signal: new AbortController().signal,
        deliver: async (frames) => {
          text += frames.toString();
          largest = Math.max(largest, frames.length);
        },
      });
      expect(parseEventFrames(text)).toEqual(all.slice(after));
      expect(largest).toBeLessThanOrEqual(1024 * 1024 + 64 * 1024);
    }
  });

  /** Runs `sql` (`?` placeholders, numbered for PostgreSQL) on a connection of its own, as an earlier version's writes. */
  const rawWrite = async (sql: string, params: unknown[]): Promise<void> => {
    if (dialect === 'sqlite') {
      const file = new Database(db.url.slice('sqlite:///'.length));
      file.prepare(sql).run(...params);
      file.close();
      return;
    }
    const client = new pg.Client({ connectionString: db.url });
    await client.connect();
    let n = 0;
    await client.query(sql.replace(/\?/g, () => `$${++n}`), params);
    await client.end();
  };

  it('replays pages an earlier version stored around a large event from the events instead', async () => {
    const texts = Array.from({ length: 1100 }, (_, i) => `{"event":"chunk","data":"${i === 499 ? 'x'.repeat(1536 * 1024) : `part ${i + 1}`}"}`);
    for (const text of texts) await runs.appendActiveEvent(runId, text, T0);
    await runs.endRun(runId, DONE, T0, { status: 'succeeded', response: null, error: null }, NO_USAGE);
    const all = [...texts, DONE].map((data, i) => ({ id: i + 1, data }));
    // Pages as they were stored before: cut after the frame that took one past 64 Ki characters.
    const frames = (from: number, to: number) => all.slice(from, to).map((frame) => `id: ${frame.id}\ndata: ${frame.data}\n\n`).join('');
    await rawWrite('delete from run_event_pages where run_id = ?', [runId]);
    await rawWrite('insert into run_event_pages (run_id, first_seq, last_seq, frames) values (?, ?, ?, ?), (?, ?, ?, ?)', [runId, 1, 500, frames(0, 500), runId, 501, 1101, frames(500, 1101)]);
    let text = '';
    let largest = 0;
    await followRunEvents({
      store: runs,
      bus,
      runId,
      after: 0,
      withIds: true,
      signal: new AbortController().signal,
      deliver: async (piece) => {
        text += piece.toString();
        largest = Math.max(largest, piece.length);
      },
    });
    expect(parseEventFrames(text)).toEqual(all);
    expect(largest).toBeLessThanOrEqual(1024 * 1024 + 64 * 1024);
  });
});
