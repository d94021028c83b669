import { and, asc, count, desc, eq, getTableColumns, gt, gte, lt, lte, sql, sum, type SQL } from 'drizzle-orm';
import type { Db, DialectAdapter } from './dialect.js';
import { DrizzleApprovalRepository } from './drizzle-approval-repository.js';
import { DrizzleRunRepository } from './drizzle-run-repository.js';
import type { ApprovalRepository } from './approval-repository.js';
import { contentSlices, type ContentLoader, type LargeTextReader } from './large-content.js';
import {
  MESSAGE_PAGE_BYTES,
  type AppendOptions,
  type AppendResult,
  type ConversationLimit,
  type ConversationRecord,
  type ConversationRepository,
  type ListedMessage,
  type ListPage,
  type MessagePage,
  type MessageRecord,
  type NewConversation,
  type NewMessage,
  type NewSummary,
} from './repository.js';
import type { RunRepository } from './run-repository.js';
import { DrizzleUserRepository } from './drizzle-user-repository.js';
import { DrizzleConsoleSessionRepository } from './drizzle-console-session-repository.js';
import type { ConsoleSessionRepository } from './console-session-repository.js';
import { DrizzleAuditRepository } from './drizzle-audit-repository.js';
import type { AuditRepository } from './audit-repository.js';
import { DrizzleWebhookRepository } from './drizzle-webhook-repository.js';
import { DeliveryOutbox } from './webhook-deliveries.js';
import { SandboxActivityTable } from './sandbox-activity.js';
import type { WebhookRepository } from './webhook-repository.js';
import type { UserRepository } from './user-repository.js';
import { appendMessagesIn } from './append-messages.js';
import { countPerUser, summaryRow } from './rows.js';

/** Thrown inside a creation's transaction to roll it back: the user is at the limit. */
class OverLimit extends Error {}

/**
 * The conversation store for both dialects, over drizzle. Every write that must be atomic starts
 * with an UPDATE of the conversation row: on PostgreSQL that locks the row until commit, so
 * concurrent writers of one conversation serialize and last_seq / total_tokens stay exact; on
 * SQLite the adapter runs one job at a time anyway.
 */
export class DrizzleRepository implements ConversationRepository {
  readonly dialect: 'sqlite' | 'postgres';
  readonly runs: RunRepository;
  readonly approvals: ApprovalRepository;
  readonly users: UserRepository;
  readonly consoleSessions: ConsoleSessionRepository;
  readonly audit: AuditRepository;
  readonly webhooks: WebhookRepository;
  readonly sandboxActivity: SandboxActivityTable | undefined;
  private readonly t;
  private readonly contents: ContentLoader;
  /** A message's size in UTF-8 bytes, read without its content. */
  private readonly contentBytes;

  /**
   * `texts` loads large messages' contents and runs' large texts (large-content.ts: on worker
   * threads); without it (an in-memory SQLite database, which no other connection can open) they
   * are read here.
   */
  constructor(
    private readonly adapter: DialectAdapter,
    private readonly texts?: LargeTextReader,
  ) {
    this.dialect = adapter.dialect;
    this.t = adapter.tables;
    // Runs' ends and approvals store their webhook deliveries in their own transactions.
    const outbox = new DeliveryOutbox(adapter);
    this.runs = new DrizzleRunRepository(adapter, outbox, texts);
    this.approvals = new DrizzleApprovalRepository(adapter, outbox);
    this.users = new DrizzleUserRepository(adapter);
    this.consoleSessions = new DrizzleConsoleSessionRepository(adapter);
    this.audit = new DrizzleAuditRepository(adapter);
    this.webhooks = new DrizzleWebhookRepository(adapter, outbox);
    this.sandboxActivity = adapter.dialect === 'postgres' ? new SandboxActivityTable(adapter) : undefined;
    this.contents = texts === undefined ? (id) => this.contentHere(id) : (id) => texts.load({ messageId: id });
    this.contentBytes = sql<number>`octet_length(${this.t.messages.content})`.mapWith(Number);
  }

  ping(): Promise<void> {
    return this.adapter.ping();
  }

  async createConversationWithin(input: NewConversation, limit: ConversationLimit): Promise<ConversationRecord | undefined> {
    try {
      return await this.insertConversation(input, limit);
    } catch (error) {
      if (error instanceof OverLimit) return undefined;
      throw error;
    }
  }

  /**
   * The user's count goes up first: on PostgreSQL that upsert locks the user's count row until
   * commit, so a concurrent creation for the same user waits and then sees this one's count (a
   * first creation included, where no row existed to lock beforehand); on SQLite one transaction
   * runs at a time. Over the limit, the transaction rolls back and nothing is stored.
   */
  private insertConversation(input: NewConversation, limit: ConversationLimit): Promise<ConversationRecord> {
    const { conversations: c, userConversationCounts: counts } = this.t;
    return this.adapter.transaction(async (tx) => {
      const [counted] = await tx
        .insert(counts)
        .values({ userId: input.userId, count: 1 })
        .onConflictDoUpdate({ target: counts.userId, set: { count: sql`${counts.count} + 1` } })
        .returning({ n: counts.count });
      const mine = eq(c.userId, input.userId);
      // Expired but not yet swept: stored, yet no longer counted as live (as listConversations does).
      const [expired] = limit.activeSince ? await tx.select({ n: count() }).from(c).where(and(mine, lt(c.lastActivityAt, limit.activeSince))) : [{ n: 0 }];
      if (counted!.n - (expired?.n ?? 0) > limit.max) throw new OverLimit();
      const [row] = await tx
        .insert(c)
        .values({ ...input, createdAt: input.now, updatedAt: null, lastActivityAt: input.now })
        .returning();
      return row!;
    });
  }

  findConversation(id: string): Promise<ConversationRecord | undefined> {
    const c = this.t.conversations;
    return this.adapter.run(async (db) => (await db.select().from(c).where(eq(c.id, id)))[0]);
  }

  listConversations(userId: string, page: ListPage): Promise<{ items: ConversationRecord[]; total: number }> {
    const { conversations: c, userConversationCounts: counts } = this.t;
    const mine = eq(c.userId, userId);
    return this.adapter.run(async (db) => {
      const [items, stored, expired] = await Promise.all([
        db
          .select()
          .from(c)
          .where(page.activeSince ? and(mine, gte(c.lastActivityAt, page.activeSince)) : mine)
          .orderBy(desc(c.lastActivityAt), desc(c.id))
          .limit(page.limit)
          .offset(page.offset),
        db.select({ n: counts.count }).from(counts).where(eq(counts.userId, userId)),
        // Expired but not yet swept: usually none, found through the same index.
        page.activeSince ? db.select({ n: count() }).from(c).where(and(mine, lt(c.lastActivityAt, page.activeSince))) : [{ n: 0 }],
      ]);
      return { items, total: (stored[0]?.n ?? 0) - (expired[0]?.n ?? 0) };
    });
  }

  deleteConversation(id: string): Promise<boolean> {
    const c = this.t.conversations;
    return this.adapter.transaction(async (tx) => {
      const gone = await tx.delete(c).where(eq(c.id, id)).returning({ userId: c.userId });
      await this.uncount(tx, gone);
      return gone.length > 0;
    });
  }

  appendMessages(conversationId: string, batch: NewMessage[], options: AppendOptions): Promise<AppendResult | undefined> {
    return this.adapter.transaction((tx) => appendMessagesIn(this.t, tx, conversationId, batch, options));
  }

  messagesAfter(conversationId: string, afterSeq: number, count: number, bytes = MESSAGE_PAGE_BYTES): Promise<ListedMessage[]> {
    const m = this.t.messages;
    const after = and(eq(m.conversationId, conversationId), gt(m.seq, afterSeq));
    return this.adapter.run(async (db) => {
      const sizes = await db.select({ seq: m.seq, bytes: this.contentBytes }).from(m).where(after).orderBy(asc(m.seq)).limit(count);
      const taken = withinPage(sizes, bytes);
      if (taken.length === 0) return [];
      return this.listed(db, and(after, lte(m.seq, taken.at(-1)!.seq)));
    });
  }

  messagesBefore(conversationId: string, beforeSeq: number | null, limit: number): Promise<MessagePage> {
    const m = this.t.messages;
    const mine = eq(m.conversationId, conversationId);
    const before = beforeSeq === null ? mine : and(mine, lt(m.seq, beforeSeq));
    return this.adapter.run(async (db) => {
      // Newest first; one row more than asked says whether older ones exist.
      const sizes = await db
        .select({ seq: m.seq, bytes: this.contentBytes })
        .from(m)
        .where(before)
        .orderBy(desc(m.seq))
        .limit(limit + 1);
      const taken = withinPage(sizes.slice(0, limit), MESSAGE_PAGE_BYTES);
      if (taken.length === 0) return { messages: [], hasMore: false };
      const messages = await this.listed(db, and(before, gte(m.seq, taken.at(-1)!.seq)));
      return { messages, hasMore: sizes.length > taken.length };
    });
  }

  messageSeq(conversationId: string, messageId: string): Promise<number | undefined> {
    const m = this.t.messages;
    return this.adapter.run(
      async (db) =>
        (
          await db
            .select({ seq: m.seq })
            .from(m)
            .where(and(eq(m.conversationId, conversationId), eq(m.id, messageId)))
        )[0]?.seq,
    );
  }

  contentSlices(messageId: string): AsyncIterable<string> {
    return contentSlices(this.contents, messageId);
  }

  findMessage(conversationId: string, messageId: string): Promise<MessageRecord | undefined> {
    const m = this.t.messages;
    return this.adapter.run(
      async (db) =>
        (
          await db
            .select()
            .from(m)
            .where(and(eq(m.conversationId, conversationId), eq(m.id, messageId)))
        )[0],
    );
  }

  recentMessages(conversationId: string, limit: number, beforeSeq: number): Promise<MessageRecord[]> {
    const m = this.t.messages;
    if (limit <= 0) return Promise.resolve([]);
    return this.adapter.run(async (db) => {
      const rows = await db
        .select()
        .from(m)
        .where(and(eq(m.conversationId, conversationId), eq(m.isSummary, false), lt(m.seq, beforeSeq)))
        .orderBy(desc(m.seq))
        .limit(limit);
      return rows.reverse();
    });
  }

  latestSummary(conversationId: string): Promise<MessageRecord | undefined> {
    return this.adapter.run((db) => this.latestSummaryIn(db, conversationId));
  }

  countActiveMessages(conversationId: string): Promise<number> {
    const m = this.t.messages;
    return this.adapter.run(async (db) => {
      const [row] = await db
        .select({ n: count() })
        .from(m)
        .where(and(eq(m.conversationId, conversationId), eq(m.isSummary, false)));
      return row?.n ?? 0;
    });
  }

  summarizableMessages(conversationId: string, keepRecent: number): Promise<MessageRecord[]> {
    const m = this.t.messages;
    const active = and(eq(m.conversationId, conversationId), eq(m.isSummary, false));
    return this.adapter.run(async (db) => {
      const [recent] = await db.select({ seq: m.seq }).from(m).where(active).orderBy(desc(m.seq)).limit(1).offset(keepRecent);
      if (!recent) return [];
      return db.select().from(m).where(and(active, lte(m.seq, recent.seq))).orderBy(asc(m.seq));
    });
  }

  applySummary(conversationId: string, summary: NewSummary): Promise<{ conversation: ConversationRecord; summary: MessageRecord } | undefined> {
    const { conversations: c, messages: m } = this.t;
    return this.adapter.transaction(async (tx) => {
      // Taking the summary's seq first locks the conversation: flags, totals and the new message
      // change together or not at all.
      const [claimed] = await tx
        .update(c)
        .set({ lastSeq: sql`${c.lastSeq} + 1`, updatedAt: summary.now, lastActivityAt: summary.now })
        .where(eq(c.id, conversationId))
        .returning({ lastSeq: c.lastSeq });
      if (!claimed) return undefined;
      const covered = and(eq(m.conversationId, conversationId), eq(m.isSummary, false), lte(m.seq, summary.upToSeq));
      const [summed] = await tx.select({ tokens: sum(m.tokenCount) }).from(m).where(covered);
      await tx.update(m).set({ isSummary: true }).where(covered);
      const previous = await this.latestSummaryIn(tx, conversationId);
      const removed = Number(summed?.tokens ?? 0) + (previous?.tokenCount ?? 0);
      const [conversation] = await tx
        .update(c)
        .set({ totalTokens: sql`${c.totalTokens} - ${removed} + ${summary.tokenCount}` })
        .where(eq(c.id, conversationId))
        .returning();
      const [stored] = await tx.insert(m).values(summaryRow(conversationId, summary, claimed.lastSeq)).returning();
      return { conversation: conversation!, summary: stored! };
    });
  }

  deleteIdleSince(cutoff: Date): Promise<number> {
    const c = this.t.conversations;
    return this.adapter.transaction(async (tx) => {
      const gone = await tx.delete(c).where(lt(c.lastActivityAt, cutoff)).returning({ userId: c.userId });
      await this.uncount(tx, gone);
      return gone.length;
    });
  }

  async close(): Promise<void> {
    await this.texts?.close();
    await this.adapter.close();
  }

  private async contentHere(messageId: string): Promise<Buffer | undefined> {
    const m = this.t.messages;
    const [row] = await this.adapter.run((db) => db.select({ content: m.content }).from(m).where(eq(m.id, messageId)));
    return row && Buffer.from(row.content, 'utf8');
  }

  /**
   * The messages `where` selects, oldest first, each content over MESSAGE_PAGE_BYTES left out (its
   * size is known without reading it: octet_length reads neither SQLite's overflow pages nor
   * PostgreSQL's TOAST).
   */
  private listed(db: Db, where: SQL | undefined): Promise<ListedMessage[]> {
    const m = this.t.messages;
    const { content, ...rest } = getTableColumns(m);
    const inline = sql<string | null>`case when octet_length(${content}) <= ${MESSAGE_PAGE_BYTES} then ${content} end`;
    return db
      .select({ ...rest, content: inline })
      .from(m)
      .where(where)
      .orderBy(asc(m.seq));
  }

  private async latestSummaryIn(db: Db, conversationId: string): Promise<MessageRecord | undefined> {
    const m = this.t.messages;
    const [row] = await db
      .select()
      .from(m)
      .where(and(eq(m.conversationId, conversationId), eq(m.role, 'summary')))
      .orderBy(desc(m.seq))
      .limit(1);
    return row;
  }

  /** Keeps the per-user conversation counts right after deleting conversations. */
  private async uncount(tx: Db, deleted: readonly { userId: string }[]): Promise<void> {
    const counts = this.t.userConversationCounts;
    for (const [userId, n] of countPerUser(deleted)) {
      await tx
        .update(counts)
        .set({ count: sql`${counts.count} - ${n}` })
        .where(eq(counts.userId, userId));
    }
  }
}

/** The leading sizes whose total stays within `budget` bytes (the first always counts). */
function withinPage<T extends { bytes: number }>(sizes: readonly T[], budget: number): T[] {
  let total = 0;
  let taken = 0;
  for (const { bytes } of sizes) {
    total += bytes;
    if (taken > 0 && total > budget) break;
    taken += 1;
  }
  return sizes.slice(0, taken);
}
