import { randomUUID } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ConversationRepository, NewMessage } from '../../src/db/repository.js';
import { createTestDatabase, DIALECTS, type TestDatabase } from '../support/databases.js';

const at = (iso: string) => new Date(iso);
/** Conversations a user may have: more than any test makes. */
const NO_LIMIT = { max: 1000, activeSince: null };
const message = (content: string, role = 'user', tokenCount = content.length): NewMessage => ({ id: randomUUID(), role, content, tokenCount });

describe.each(DIALECTS)('conversation repository on %s', (dialect) => {
  let db: TestDatabase;
  let repo: ConversationRepository;

  beforeEach(async () => {
    db = await createTestDatabase(dialect);
    repo = db.repository;
  });
  afterEach(async () => db.drop());

  const create = async (userId: string, now = at('2026-01-01T00:00:00.000Z'), title: string | null = null) =>
    (await repo.createConversationWithin({ id: randomUUID(), userId, agentType: 'explore', workingDir: '.', title, now }, NO_LIMIT))!;
  /** Every stored message of a conversation, summaries included, oldest first: read a page at a time as the service does. */
  const allMessages = (conversationId: string) => repo.messagesAfter(conversationId, 0, 1000);

  it('stores a conversation with its defaults and finds it by id', async () => {
    const created = await create('alice');
    expect(created).toMatchObject({ userId: 'alice', agentType: 'explore', title: null, workingDir: '.', totalTokens: 0, updatedAt: null });
    expect(await repo.findConversation(created.id)).toEqual(created);
    expect(await repo.findConversation(randomUUID())).toBeUndefined();
  });

  it('appends messages in order, adds their tokens and sets the title only once', async () => {
    const conversation = await create('alice');
    const now = at('2026-01-01T00:01:00.000Z');
    const first = await repo.appendMessages(conversation.id, [message('hello'), message('hi there', 'assistant')], { now, titleIfUnset: 'hello' });
    await repo.appendMessages(conversation.id, [message('again')], { now, titleIfUnset: 'again' });
    expect(first?.messages.map((m) => [m.seq, m.role, m.content])).toEqual([
      [1, 'user', 'hello'],
      [2, 'assistant', 'hi there'],
    ]);
    const stored = await repo.findConversation(conversation.id);
    expect(stored).toMatchObject({ title: 'hello', totalTokens: 5 + 8 + 5, updatedAt: now, lastSeq: 3 });
    expect((await allMessages(conversation.id)).map((m) => m.content)).toEqual(['hello', 'hi there', 'again']);
  });

  it('answers undefined when appending to a conversation that is gone', async () => {
    expect(await repo.appendMessages(randomUUID(), [message('x')], { now: new Date(), titleIfUnset: null })).toBeUndefined();
  });

  it('keeps total_tokens exact and every message under 50 concurrent appends', async () => {
    const conversation = await create('alice');
    await Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        repo.appendMessages(conversation.id, [message(`question ${i}`), message(`answer ${i}!`, 'assistant')], {
          now: new Date(),
          titleIfUnset: `question ${i}`,
        }),
      ),
    );
    const messages = await allMessages(conversation.id);
    const stored = await repo.findConversation(conversation.id);
    expect(messages).toHaveLength(100);
    expect(messages.map((m) => m.seq)).toEqual(Array.from({ length: 100 }, (_, i) => i + 1));
    expect(stored?.totalTokens).toBe(messages.reduce((sum, m) => sum + m.tokenCount, 0));
    // Each pair stays together: a user message is always followed by its own answer.
    for (let i = 0; i < 100; i += 2) expect(messages[i + 1]?.content).toBe(messages[i]?.content?.replace('question', 'answer') + '!');
  });

  it('lists only the user’s conversations, most recently active first, with paging and a total', async () => {
    const a = await create('alice', at('2026-01-01T00:00:00.000Z'));
    const b = await create('alice', at('2026-01-02T00:00:00.000Z'));
    const c = await create('alice', at('2026-01-03T00:00:00.000Z'));
    await create('bob', at('2026-01-04T00:00:00.000Z'));
    await repo.appendMessages(a.id, [message('bump')], { now: at('2026-01-05T00:00:00.000Z'), titleIfUnset: null });
    const page = await repo.listConversations('alice', { limit: 2, offset: 0, activeSince: null });
    expect(page.items.map((x) => x.id)).toEqual([a.id, c.id]);
    expect(page.total).toBe(3);
    const next = await repo.listConversations('alice', { limit: 2, offset: 2, activeSince: null });
    expect(next.items.map((x) => x.id)).toEqual([b.id]);
  });

  it('leaves expired conversations out of lists and totals', async () => {
    await create('alice', at('2026-01-01T00:00:00.000Z'));
    const fresh = await create('alice', at('2026-01-03T00:00:00.000Z'));
    const page = await repo.listConversations('alice', { limit: 10, offset: 0, activeSince: at('2026-01-02T00:00:00.000Z') });
    expect(page).toMatchObject({ total: 1, items: [{ id: fresh.id }] });
  });

  it('deletes a conversation with its messages and keeps the user total right', async () => {
    const conversation = await create('alice');
    await create('alice');
    await repo.appendMessages(conversation.id, [message('x')], { now: new Date(), titleIfUnset: null });
    expect(await repo.deleteConversation(conversation.id)).toBe(true);
    expect(await repo.deleteConversation(conversation.id)).toBe(false);
    expect(await allMessages(conversation.id)).toEqual([]);
    expect((await repo.listConversations('alice', { limit: 10, offset: 0, activeSince: null })).total).toBe(1);
  });

  it('sweeps conversations idle since before a cutoff', async () => {
    const old = await create('alice', at('2026-01-01T00:00:00.000Z'));
    await create('bob', at('2026-01-01T00:00:00.000Z'));
    const kept = await create('alice', at('2026-01-01T00:00:00.000Z'));
    await repo.appendMessages(kept.id, [message('still here')], { now: at('2026-01-10T00:00:00.000Z'), titleIfUnset: null });
    await repo.appendMessages(old.id, [message('old')], { now: at('2026-01-02T00:00:00.000Z'), titleIfUnset: null });
    expect(await repo.deleteIdleSince(at('2026-01-05T00:00:00.000Z'))).toBe(2);
    expect(await repo.findConversation(old.id)).toBeUndefined();
    expect(await allMessages(old.id)).toEqual([]);
    expect((await repo.listConversations('alice', { limit: 10, offset: 0, activeSince: null })).total).toBe(1);
    expect((await repo.listConversations('bob', { limit: 10, offset: 0, activeSince: null })).total).toBe(0);
  });

  describe('summaries and recent messages', () => {
    const seed = async (n: number) => {
      const conversation = await create('alice');
      await repo.appendMessages(
        conversation.id,
        Array.from({ length: n }, (_, i) => message(`m${i + 1}`, i % 2 === 0 ? 'user' : 'assistant', 10)),
        { now: new Date(), titleIfUnset: null },
      );
      return conversation;
    };

    it('gives the latest non-summary messages before a sequence number, oldest first', async () => {
      const conversation = await seed(10);
      expect((await repo.recentMessages(conversation.id, 3, 10)).map((x) => x.content)).toEqual(['m7', 'm8', 'm9']);
      expect((await repo.recentMessages(conversation.id, 30, 3)).map((x) => x.content)).toEqual(['m1', 'm2']);
      expect(await repo.recentMessages(conversation.id, 0, 10)).toEqual([]);
    });

    it('summarizes the messages outside the recent window and keeps total_tokens = active tokens', async () => {
      const conversation = await seed(10);
      const toSummarize = await repo.summarizableMessages(conversation.id, 6);
      expect(toSummarize.map((x) => x.content)).toEqual(['m1', 'm2', 'm3', 'm4']);
      const last = toSummarize.at(-1)!;
      const applied = await repo.applySummary(conversation.id, { id: randomUUID(), content: 'S1', tokenCount: 7, upToSeq: last.seq, upToId: last.id, now: new Date() });
      expect(applied?.summary).toMatchObject({ role: 'summary', isSummary: true, summarizesUpTo: last.id, seq: 11 });
      expect(applied?.conversation.totalTokens).toBe(100 - 40 + 7);
      expect(await repo.countActiveMessages(conversation.id)).toBe(6);
      expect((await repo.latestSummary(conversation.id))?.content).toBe('S1');
      expect((await repo.recentMessages(conversation.id, 6, 100)).map((x) => x.content)).toEqual(['m5', 'm6', 'm7', 'm8', 'm9', 'm10']);
    });

    it('supersedes the previous summary on the second summarization', async () => {
      const conversation = await seed(10);
      const first = (await repo.summarizableMessages(conversation.id, 6)).at(-1)!;
      await repo.applySummary(conversation.id, { id: randomUUID(), content: 'S1', tokenCount: 7, upToSeq: first.seq, upToId: first.id, now: new Date() });
      await repo.appendMessages(conversation.id, [message('m11', 'user', 10), message('m12', 'assistant', 10)], { now: new Date(), titleIfUnset: null });
      const second = await repo.summarizableMessages(conversation.id, 6);
      expect(second.map((x) => x.content)).toEqual(['m5', 'm6']);
      const applied = await repo.applySummary(conversation.id, { id: randomUUID(), content: 'S2', tokenCount: 5, upToSeq: second.at(-1)!.seq, upToId: second.at(-1)!.id, now: new Date() });
      // 67 + 20 new - 20 summarized - 7 old summary + 5 new summary
      expect(applied?.conversation.totalTokens).toBe(65);
      const all = await allMessages(conversation.id);
      const active = all.filter((x) => !x.isSummary);
      expect(applied?.conversation.totalTokens).toBe(active.reduce((n, x) => n + x.tokenCount, 0) + 5);
      expect((await repo.latestSummary(conversation.id))?.content).toBe('S2');
    });

    it('has nothing to summarize while every message is in the recent window', async () => {
      const conversation = await seed(6);
      expect(await repo.summarizableMessages(conversation.id, 6)).toEqual([]);
    });
  });

  it('answers a ping', async () => {
    await expect(repo.ping()).resolves.toBeUndefined();
  });
});
