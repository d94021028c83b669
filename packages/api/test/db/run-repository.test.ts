import { randomUUID } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ConversationRepository } from '../../src/db/repository.js';
import { RunConversationActiveError, RunConversationGoneError, type EventFrames, type NewRun, type RunRepository } from '../../src/db/run-repository.js';
import { createTestDatabase, DIALECTS, type TestDatabase } from '../support/databases.js';

const at = (iso: string) => new Date(iso);
const T0 = at('2026-02-01T10:00:00.000Z');
const minutes = (n: number) => new Date(T0.getTime() + n * 60_000);
const DAY_AGO = (now: Date) => new Date(now.getTime() - 24 * 3_600_000);
const SUCCEEDED = { status: 'succeeded', response: null, error: null } as const;
/** Conversations a user may have: more than any test makes. */
const NO_LIMIT = { max: 1000, activeSince: null };
const NO_USAGE = { model_calls: 0, tool_calls: 0, input_tokens: 0, output_tokens: 0 };
const ENDING = { error: 'Run interrupted: the service stopped', eventData: '{"event":"error","error_message":"Run interrupted: the service stopped"}' };

describe.each(DIALECTS)('run repository on %s', (dialect) => {
  let db: TestDatabase;
  let repo: ConversationRepository;
  let runs: RunRepository;

  beforeEach(async () => {
    db = await createTestDatabase(dialect);
    repo = db.repository;
    runs = repo.runs;
  });
  afterEach(async () => db.drop());

  const newRun = (overrides: Partial<NewRun> = {}): NewRun => ({
    id: randomUUID(),
    userId: 'alice',
    agentType: 'task',
    mode: 'default',
    prompt: 'fix the build',
    workingDir: '/srv/app',
    conversationId: null,
    status: 'queued',
    now: T0,
    idempotencyKey: null,
    requestHash: null,
    leaseOwner: 'replica-a',
    leaseUntil: minutes(1),
    ...overrides,
  });
  const create = async (overrides: Partial<NewRun> = {}) => (await runs.createRun(newRun(overrides), { idempotentSince: DAY_AGO(overrides.now ?? T0) })).run;

  it('stores a run with zero usage and no events, and finds it by id', async () => {
    const run = await create();
    expect(run).toMatchObject({
      userId: 'alice',
      status: 'queued',
      prompt: 'fix the build',
      conversationId: null,
      response: null,
      error: null,
      createdAt: T0,
      startedAt: null,
      endedAt: null,
      modelCalls: 0,
      toolCalls: 0,
      inputTokens: 0,
      outputTokens: 0,
      lastEventId: 0,
    });
    expect(await runs.findRun(run.id)).toEqual(run);
    expect(await runs.findRun(randomUUID())).toBeUndefined();
  });

  it('returns the first run for a repeated idempotency key within the window and stores nothing new', async () => {
    const first = await runs.createRun(newRun({ idempotencyKey: 'k1', requestHash: 'h1' }), { idempotentSince: DAY_AGO(T0) });
    const again = await runs.createRun(newRun({ idempotencyKey: 'k1', requestHash: 'h2', now: minutes(5) }), { idempotentSince: DAY_AGO(minutes(5)) });
    expect(first.created).toBe(true);
    expect(again).toEqual({ run: first.run, created: false });
    expect(again.run.requestHash).toBe('h1');
    expect((await runs.listRuns('alice', { limit: 10, offset: 0, status: null })).total).toBe(1);
    expect(await runs.findRunByIdempotencyKey('alice', 'k1', DAY_AGO(minutes(5)))).toEqual(first.run);
    // Another user's key of the same name is another request.
    expect((await runs.createRun(newRun({ userId: 'bob', idempotencyKey: 'k1' }), { idempotentSince: DAY_AGO(T0) })).created).toBe(true);
  });

  it('starts a new run for a key older than the window', async () => {
    const old = await create({ idempotencyKey: 'k1' });
    const later = minutes(25 * 60);
    const fresh = await runs.createRun(newRun({ idempotencyKey: 'k1', now: later }), { idempotentSince: DAY_AGO(later) });
    expect(fresh.created).toBe(true);
    expect(fresh.run.id).not.toBe(old.id);
    expect(await runs.findRunByIdempotencyKey('alice', 'k1', DAY_AGO(later))).toEqual(fresh.run);
    expect(await runs.findRun(old.id)).toMatchObject({ id: old.id, idempotencyKey: null });
  });

  it('creates exactly one run when 20 requests carry the same key at once', async () => {
    const results = await Promise.all(
      Array.from({ length: 20 }, () => runs.createRun(newRun({ idempotencyKey: 'same' }), { idempotentSince: DAY_AGO(T0) })),
    );
    expect(results.filter((r) => r.created)).toHaveLength(1);
    expect(new Set(results.map((r) => r.run.id)).size).toBe(1);
    expect((await runs.listRuns('alice', { limit: 50, offset: 0, status: null })).total).toBe(1);
  });

  it('lists only the user’s runs, newest first, by status, with paging and a total', async () => {
    const a = await create({ now: minutes(1) });
    const b = await create({ now: minutes(2), status: 'running' });
    const c = await create({ now: minutes(3) });
    await create({ userId: 'bob', now: minutes(4) });
    const all = await runs.listRuns('alice', { limit: 2, offset: 0, status: null });
    expect(all.items.map((r) => r.id)).toEqual([c.id, b.id]);
    expect(all.total).toBe(3);
    expect(await runs.listRuns('alice', { limit: 2, offset: 2, status: null })).toMatchObject({ items: [{ id: a.id }], total: 3 });
    // A page past the end still tells how many there are.
    expect(await runs.listRuns('alice', { limit: 2, offset: 10, status: null })).toEqual({ items: [], total: 3 });
    const queued = await runs.listRuns('alice', { limit: 10, offset: 0, status: 'queued' });
    expect(queued.items.map((r) => r.id)).toEqual([c.id, a.id]);
    expect(queued.total).toBe(2);
  });

  it('updates status, response and times, and only from the given statuses when asked', async () => {
    const run = await create();
    const started = await runs.updateRun(run.id, { status: 'running', startedAt: minutes(1) });
    expect(started).toMatchObject({ status: 'running', startedAt: minutes(1) });
    const ended = await runs.updateRun(run.id, { status: 'succeeded', endedAt: minutes(2), response: 'done', leaseOwner: null, leaseUntil: null }, [
      'running',
    ]);
    expect(ended).toMatchObject({ status: 'succeeded', response: 'done', endedAt: minutes(2), leaseOwner: null });
    // A cancel that comes after the end changes nothing.
    expect(await runs.updateRun(run.id, { status: 'cancelled' }, ['queued', 'running', 'waiting_approval'])).toBeUndefined();
    expect((await runs.findRun(run.id))?.status).toBe('succeeded');
    expect(await runs.updateRun(randomUUID(), { status: 'failed' })).toBeUndefined();
  });

  it('adds the usage to the counters when the run ends, once', async () => {
    const run = await create({ status: 'running' });
    const usage = { model_calls: 30, tool_calls: 2, input_tokens: 3000, output_tokens: 210 };
    await runs.endRun(run.id, '{"event":"done"}', T0, SUCCEEDED, usage);
    expect(await runs.endRun(run.id, '{"event":"done"}', T0, SUCCEEDED, usage)).toBeUndefined();
    expect(await runs.findRun(run.id)).toMatchObject({ status: 'succeeded', endedAt: T0, leaseOwner: null, modelCalls: 30, toolCalls: 2, inputTokens: 3000, outputTokens: 210 });
  });

  it("adds a day's tokens past 2^31 and reads the total back exactly", async () => {
    // Each run's counters fit 32 bits; the day's sum of them does not.
    const usage = { ...NO_USAGE, input_tokens: 2_000_000_000, output_tokens: 100_000_000 };
    for (const minute of [1, 2]) {
      const run = await create({ status: 'running', now: minutes(minute) });
      expect(await runs.endRun(run.id, '{"event":"done"}', minutes(minute), SUCCEEDED, usage)).toBeDefined();
    }
    expect(await runs.tokensSince('alice', T0)).toBe(4_200_000_000);
  });

  it('numbers events 1, 2, 3 … without gaps under 50 concurrent appends, keeping their text exactly', async () => {
    const run = await create();
    const texts = Array.from({ length: 50 }, (_, i) => `{"event":"chunk","content":"part ${i} é😀\\u0001"}`);
    const appended = await Promise.all(texts.map((text) => runs.appendActiveEvent(run.id, text, T0)));
    expect(appended.map((a) => a!.seq).sort((x, y) => x - y)).toEqual(Array.from({ length: 50 }, (_, i) => i + 1));
    const events = await runs.eventsAfter(run.id, 0, 100);
    expect(events.map((e) => e.seq)).toEqual(Array.from({ length: 50 }, (_, i) => i + 1));
    expect(new Set(events.map((e) => e.data))).toEqual(new Set(texts));
    for (const a of appended) expect(events[a!.seq - 1]!.data).toBe(a!.data);
    expect((await runs.findRun(run.id))?.lastEventId).toBe(50);
  });

  it('stores a running run’s next event as read back later, and nothing once the run has ended', async () => {
    const run = await create({ status: 'running' });
    await runs.appendActiveEvent(run.id, '{"event":"thinking"}', T0);
    const texts = Array.from({ length: 20 }, (_, i) => `{"event":"chunk","data":"part ${i} é😀"}`);
    const appended = await Promise.all(texts.map((text, i) => runs.appendActiveEvent(run.id, text, minutes(i))));
    const events = await runs.eventsAfter(run.id, 1, 100);
    expect(events.map((e) => e.seq)).toEqual(Array.from({ length: 20 }, (_, i) => i + 2));
    expect([...appended].sort((a, b) => a!.seq - b!.seq)).toEqual(events);
    await runs.endRun(run.id, '{"event":"done"}', T0, SUCCEEDED, NO_USAGE);
    expect(await runs.appendActiveEvent(run.id, '{"event":"chunk","data":"late"}', T0)).toBeUndefined();
    expect(await runs.appendActiveEvent(randomUUID(), '{}', T0)).toBeUndefined();
    expect((await runs.findRun(run.id))?.lastEventId).toBe(22);
    expect((await runs.eventsAfter(run.id, 21, 100)).map((e) => e.data)).toEqual(['{"event":"done"}']);
  });

  it('replays events after a given seq, a page at a time', async () => {
    const run = await create();
    for (let i = 1; i <= 7; i++) await runs.appendActiveEvent(run.id, `{"n":${i}}`, T0);
    expect((await runs.eventsAfter(run.id, 2, 3)).map((e) => e.data)).toEqual(['{"n":3}', '{"n":4}', '{"n":5}']);
    expect((await runs.eventsAfter(run.id, 5, 100)).map((e) => e.seq)).toEqual([6, 7]);
    expect(await runs.eventsAfter(run.id, 7, 100)).toEqual([]);
    expect(await runs.eventsAfter(run.id, 99, 100)).toEqual([]);
  });

  it('renders a page of events as SSE frames, with or without id lines', async () => {
    const run = await create({ status: 'running' });
    const texts = Array.from({ length: 5 }, (_, i) => `{"event":"chunk","data":"part ${i} é😀 \\"q\\""}`);
    for (const text of texts) await runs.appendActiveEvent(run.id, text, T0);
    const frames = (from: number, to: number, withIds: boolean) =>
      texts
        .slice(from, to)
        .map((text, i) => `${withIds ? `id: ${from + i + 1}\n` : ''}data: ${text}\n\n`)
        .join('');
    expect(await runs.eventFramesAfter(run.id, 1, 3, true)).toEqual({ text: frames(1, 4, true), lastSeq: 4 });
    expect(await runs.eventFramesAfter(run.id, 0, 100, false)).toEqual({ text: frames(0, 5, false), lastSeq: 5 });
    expect(await runs.eventFramesAfter(run.id, 4, 100, true)).toEqual({ text: frames(4, 5, true), lastSeq: 5 });
    expect(await runs.eventFramesAfter(run.id, 5, 100, true)).toBeUndefined();
    expect(await runs.eventFramesAfter(randomUUID(), 0, 100, false)).toBeUndefined();
  });

  it('renders a long page in seq order', async () => {
    const run = await create({ status: 'running' });
    for (let i = 1; i <= 1200; i++) await runs.appendActiveEvent(run.id, `{"n":${i}}`, T0);
    const page = (await runs.eventFramesAfter(run.id, 100, 1000, true)) as EventFrames | undefined;
    expect(page?.lastSeq).toBe(1100);
    const seqs = [...page!.text.matchAll(/^id: (\d+)\ndata: \{"n":(\d+)\}$/gm)].map((m) => [Number(m[1]), Number(m[2])]);
    expect(seqs).toEqual(Array.from({ length: 1000 }, (_, i) => [i + 101, i + 101]));
  });

  const joined = async (slices: AsyncIterable<string>): Promise<string> => {
    let text = '';
    for await (const slice of slices) text += slice;
    return text;
  };

  it('leaves a run’s texts over 256 KiB out of what it reads, and a page’s past 1 MiB, and reads them whole a slice at a time', async () => {
    const prompt = `ü${'p'.repeat(300 * 1024)}`;
    const big = await create({ prompt, now: minutes(10) });
    await runs.updateRun(big.id, { response: 'short' });
    expect(await runs.viewRun(big.id)).toMatchObject({ id: big.id, prompt: { largeBytes: 300 * 1024 + 2 }, response: 'short', error: null });
    expect(await joined(runs.runTextSlices(big.id, 'prompt'))).toBe(prompt);
    // Six answers of 200 KiB: the first five fit in a page's 1 MiB, the sixth is left out.
    const answers = Array.from({ length: 6 }, (_, i) => `${i}${'a'.repeat(200 * 1024 - 1)}`);
    for (const [i, answer] of answers.entries()) {
      const run = await create({ now: minutes(9 - i) });
      await runs.updateRun(run.id, { response: answer });
    }
    const { items, total } = await runs.listRuns('alice', { limit: 10, offset: 0, status: null });
    expect(total).toBe(7);
    expect(items.map((run) => run.prompt)).toEqual([{ largeBytes: 300 * 1024 + 2 }, ...Array<string>(6).fill('fix the build')]);
    expect(items.slice(1).map((run) => run.response)).toEqual([...answers.slice(0, 5), { largeBytes: 200 * 1024 }]);
    expect(await joined(runs.runTextSlices(items[6]!.id, 'response'))).toBe(answers[5]);
    expect(await joined(runs.runTextSlices(randomUUID(), 'error'))).toBe('');
  });

  it('measures events before joining them: a page stops at 1 MiB, and an event over 256 KiB is read on its own', async () => {
    const run = await create({ status: 'running' });
    const event = (kib: number, tag: string) => `{"event":"chunk","data":"${tag}${'x'.repeat(kib * 1024)}"}`;
    const texts = ['{"event":"chunk","data":"small"}', ...Array.from({ length: 6 }, (_, i) => event(200, `${i}`)), event(300, 'large'), '{"event":"done"}'];
    for (const text of texts) await runs.appendActiveEvent(run.id, text, T0);
    const frames = (from: number, to: number) =>
      texts
        .slice(from, to)
        .map((text, i) => `id: ${from + i + 1}\ndata: ${text}\n\n`)
        .join('');
    expect(await runs.eventFramesAfter(run.id, 0, 100, true)).toEqual({ text: frames(0, 6), lastSeq: 6, cut: true });
    expect(await runs.eventFramesAfter(run.id, 6, 100, true)).toEqual({ text: frames(6, 7), lastSeq: 7, cut: true });
    expect(await runs.eventFramesAfter(run.id, 7, 100, true)).toEqual({ largeSeq: 8 });
    expect(await joined(runs.eventSlices(run.id, 8))).toBe(texts[7]);
    expect(await runs.eventFramesAfter(run.id, 8, 100, true)).toEqual({ text: frames(8, 9), lastSeq: 9 });
    // What a follower has yet to send, in bytes, without reading the events.
    expect(await runs.eventTextAfter(run.id, 6)).toBe(Buffer.byteLength(texts.slice(6).join('')));
  });

  it('stores a long run’s frames in pages when it ends, and cuts the page at any seq', async () => {
    const run = await create({ status: 'running' });
    const texts = Array.from({ length: 1199 }, (_, i) => `{"event":"chunk","data":"${i % 300 === 3 ? 'é'.repeat(30_000) : `part ${i}`}"}`);
    for (const text of texts) await runs.appendActiveEvent(run.id, text, T0);
    expect(await runs.eventPagesAfter(run.id, 0, 4)).toEqual([]);
    await runs.endRun(run.id, '{"event":"done"}', T0, SUCCEEDED, NO_USAGE);
    const all = [...texts, '{"event":"done"}'].map((text, i) => `id: ${i + 1}\ndata: ${text}\n\n`);
    const readFrom = async (after: number) => {
      let text = '';
      let pages = 0;
      for (let read = await runs.eventPagesAfter(run.id, after, 2); read.length > 0; read = await runs.eventPagesAfter(run.id, read.at(-1)!.lastSeq, 2)) {
        text += read.map((page) => page.bytes.toString()).join('');
        pages += read.length;
      }
      return { text, pages };
    };
    const whole = await readFrom(0);
    expect(whole.text).toBe(all.join(''));
    expect(whole.pages).toBeGreaterThan(2);
    for (const after of [1, 17, 303, 1199]) expect((await readFrom(after)).text).toBe(all.slice(after).join(''));
    expect(await runs.eventPagesAfter(run.id, 1200, 4)).toEqual([]);
    expect(await runs.deleteRunsEndedBefore(minutes(1))).toBe(1);
    expect(await runs.eventPagesAfter(run.id, 0, 4)).toEqual([]);
  });

  it('stores no pages for a short run', async () => {
    const run = await create({ status: 'running' });
    for (let i = 0; i < 10; i++) await runs.appendActiveEvent(run.id, `{"n":${i}}`, T0);
    await runs.endRun(run.id, '{"event":"done"}', T0, SUCCEEDED, NO_USAGE);
    expect(await runs.eventPagesAfter(run.id, 0, 4)).toEqual([]);
  });

  it('stores a final event and the status it implies together', async () => {
    const run = await create({ status: 'running' });
    await runs.appendActiveEvent(run.id, '{"event":"thinking"}', minutes(1));
    const last = await runs.endRun(run.id, '{"event":"done"}', minutes(2), { ...SUCCEEDED, response: 'ok' }, NO_USAGE);
    expect(last?.event).toEqual({ runId: run.id, seq: 2, data: '{"event":"done"}', createdAt: minutes(2) });
    expect(last?.run).toMatchObject({ status: 'succeeded', lastEventId: 2, response: 'ok' });
    expect(await runs.endRun(randomUUID(), '{}', T0, SUCCEEDED, NO_USAGE)).toBeUndefined();
  });

  it('interrupts active runs whose lease ran out, with a last error event, and frees their conversation', async () => {
    const conversation = (await repo.createConversationWithin({ id: randomUUID(), userId: 'alice', agentType: 'task', workingDir: '.', title: null, now: T0 }, NO_LIMIT))!;
    const dead = await create({ status: 'running', conversationId: conversation.id, leaseUntil: minutes(1) });
    await expect(create({ conversationId: conversation.id })).rejects.toBeInstanceOf(RunConversationActiveError);
    await runs.appendActiveEvent(dead.id, '{"event":"thinking"}', T0);
    const alive = await create({ status: 'running', leaseUntil: minutes(10) });
    const finished = await create({ status: 'running', leaseUntil: minutes(1) });
    await runs.updateRun(finished.id, { status: 'succeeded', endedAt: minutes(1) });

    await runs.renewLeases('replica-a', minutes(10));
    expect(await runs.interruptAbandonedRuns(minutes(5), minutes(5), ENDING)).toEqual([]);

    await runs.updateRun(dead.id, { leaseUntil: minutes(1) });
    expect(await runs.interruptAbandonedRuns(minutes(5), minutes(5), ENDING)).toEqual([dead.id]);
    expect(await runs.findRun(dead.id)).toMatchObject({ status: 'interrupted', error: ENDING.error, endedAt: minutes(5), lastEventId: 2 });
    expect((await runs.eventsAfter(dead.id, 0, 10)).map((e) => e.data)).toEqual(['{"event":"thinking"}', ENDING.eventData]);
    expect((await runs.findRun(alive.id))?.status).toBe('running');
    expect((await runs.findRun(finished.id))?.status).toBe('succeeded');
    expect((await create({ conversationId: conversation.id, now: minutes(5) })).conversationId).toBe(conversation.id);
  });

  describe('conversation turns', () => {
    const conversationOf = (userId = 'alice') =>
      repo.createConversationWithin({ id: randomUUID(), userId, agentType: 'task', workingDir: '.', title: null, now: T0 }, NO_LIMIT).then((created) => created!);
    const userMessage = (content: string) => ({ message: { id: randomUUID(), role: 'user', content, tokenCount: 3 }, titleIfUnset: content });

    it('lets a conversation have one active run at a time, and the next once it ended', async () => {
      const { id } = await conversationOf();
      const first = await create({ conversationId: id });
      await expect(create({ conversationId: id, status: 'running' })).rejects.toBeInstanceOf(RunConversationActiveError);
      await runs.updateRun(first.id, { status: 'waiting_approval' });
      await expect(create({ conversationId: id })).rejects.toBeInstanceOf(RunConversationActiveError);
      // Other conversations, and runs of none, are not held up.
      expect((await create({ conversationId: (await conversationOf()).id })).status).toBe('queued');
      expect((await create()).conversationId).toBeNull();
      await runs.updateRun(first.id, { status: 'cancelled', endedAt: minutes(1) });
      expect((await create({ conversationId: id, now: minutes(2) })).conversationId).toBe(id);
    });

    it('stores the user message with its run, and neither when the conversation is busy', async () => {
      const conversation = await conversationOf();
      const stored = await runs.createRun(newRun({ conversationId: conversation.id }), { idempotentSince: DAY_AGO(T0), userMessage: userMessage('first question') });
      expect(stored.created).toBe(true);
      expect(stored.turn?.messages).toMatchObject([{ role: 'user', content: 'first question', seq: 1, conversationId: conversation.id }]);
      expect(stored.turn?.conversation).toMatchObject({ lastSeq: 1, totalTokens: 3, title: 'first question' });

      const busy = runs.createRun(newRun({ conversationId: conversation.id }), { idempotentSince: DAY_AGO(T0), userMessage: userMessage('second question') });
      await expect(busy).rejects.toBeInstanceOf(RunConversationActiveError);
      expect((await repo.messagesAfter(conversation.id, 0, 100)).map((m) => m.content)).toEqual(['first question']);
      expect((await repo.findConversation(conversation.id))?.totalTokens).toBe(3);
    });

    it('stores no second user message for a repeated idempotency key, and nothing for a conversation gone', async () => {
      const conversation = await conversationOf();
      const first = await runs.createRun(newRun({ conversationId: conversation.id, idempotencyKey: 'k', requestHash: 'h' }), {
        idempotentSince: DAY_AGO(T0),
        userMessage: userMessage('once'),
      });
      await runs.updateRun(first.run.id, { status: 'succeeded', endedAt: minutes(1) });
      const again = await runs.createRun(newRun({ conversationId: conversation.id, idempotencyKey: 'k', requestHash: 'h', now: minutes(2) }), {
        idempotentSince: DAY_AGO(minutes(2)),
        userMessage: userMessage('once'),
      });
      expect(again).toMatchObject({ created: false, run: { id: first.run.id } });
      expect(again.turn).toBeUndefined();
      expect((await repo.messagesAfter(conversation.id, 0, 100)).map((m) => m.content)).toEqual(['once']);

      const gone = runs.createRun(newRun({ conversationId: randomUUID() }), { idempotentSince: DAY_AGO(T0), userMessage: userMessage('lost') });
      await expect(gone).rejects.toBeInstanceOf(RunConversationGoneError);
      expect((await runs.listRuns('alice', { limit: 10, offset: 0, status: null })).total).toBe(1);
    });
  });

  it('deletes ended runs older than the cutoff with their events, and keeps the rest', async () => {
    const old = await create();
    await runs.endRun(old.id, '{"event":"done"}', minutes(1), SUCCEEDED, NO_USAGE);
    const recent = await create();
    await runs.updateRun(recent.id, { status: 'failed', endedAt: minutes(100) });
    const active = await create({ status: 'running' });
    expect(await runs.deleteRunsEndedBefore(minutes(50))).toBe(1);
    expect(await runs.findRun(old.id)).toBeUndefined();
    expect(await runs.eventsAfter(old.id, 0, 10)).toEqual([]);
    expect(await runs.findRun(recent.id)).toBeDefined();
    expect(await runs.findRun(active.id)).toBeDefined();
  });

  it('deletes a conversation’s runs and their events with the conversation', async () => {
    const conversation = (await repo.createConversationWithin({ id: randomUUID(), userId: 'alice', agentType: 'task', workingDir: '.', title: null, now: T0 }, NO_LIMIT))!;
    const run = await create({ conversationId: conversation.id });
    await runs.appendActiveEvent(run.id, '{"event":"thinking"}', T0);
    const other = await create();
    expect(await repo.deleteConversation(conversation.id)).toBe(true);
    expect(await runs.findRun(run.id)).toBeUndefined();
    expect(await runs.eventsAfter(run.id, 0, 10)).toEqual([]);
    expect(await runs.findRun(other.id)).toBeDefined();
  });
});
