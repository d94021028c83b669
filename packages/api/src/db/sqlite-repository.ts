import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { and, asc, count, desc, eq, gte, isNull, lt, lte, or, sql, sum } from 'drizzle-orm';
import { drizzle, type BetterSQLite3Database } from 'drizzle-orm/better-sqlite3';
import { migrate } from 'drizzle-orm/better-sqlite3/migrator';
import type { Logger as DrizzleLogger } from 'drizzle-orm/logger';
import type {
  AppendOptions,
  AppendResult,
  ConversationRecord,
  ConversationRepository,
  ListPage,
  MessageRecord,
  NewConversation,
  NewMessage,
  NewSummary,
} from './repository.js';
import { countPerUser, messageRows, summaryRow, tokensOf } from './rows.js';
import { conversations as c, messages as m, userConversationCounts as counts } from './schema/sqlite.js';
import * as schema from './schema/sqlite.js';

const MIGRATIONS = fileURLToPath(new URL('../../migrations/sqlite', import.meta.url));

/**
 * better-sqlite3 is synchronous: each method runs to completion inside one call, so a
 * transaction here is never interleaved with another request's work in this process, and
 * other processes wait on SQLite's own lock (busy_timeout).
 */
export class SqliteRepository implements ConversationRepository {
  readonly dialect = 'sqlite' as const;
  private readonly db: BetterSQLite3Database<typeof schema>;

  constructor(
    private readonly client: Database.Database,
    logger?: DrizzleLogger,
  ) {
    this.db = drizzle({ client, schema, ...(logger ? { logger } : {}) });
  }

  static open(path: string, logger?: DrizzleLogger): SqliteRepository {
    if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true });
    const client = new Database(path);
    client.pragma('journal_mode = WAL');
    client.pragma('synchronous = NORMAL');
    client.pragma('foreign_keys = ON');
    client.pragma('busy_timeout = 5000');
    const repository = new SqliteRepository(client, logger);
    migrate(repository.db, { migrationsFolder: MIGRATIONS });
    return repository;
  }

  async ping(): Promise<void> {
    this.client.prepare('select 1').get();
  }

  async createConversation(input: NewConversation): Promise<ConversationRecord> {
    return this.db.transaction((tx) => {
      const [row] = tx
        .insert(c)
        .values({ ...input, createdAt: input.now, updatedAt: null, lastActivityAt: input.now })
        .returning()
        .all();
      tx.insert(counts)
        .values({ userId: input.userId, count: 1 })
        .onConflictDoUpdate({ target: counts.userId, set: { count: sql`${counts.count} + 1` } })
        .run();
      return row!;
    });
  }

  async findConversation(id: string): Promise<ConversationRecord | undefined> {
    return this.db.select().from(c).where(eq(c.id, id)).get();
  }

  async listConversations(userId: string, page: ListPage): Promise<{ items: ConversationRecord[]; total: number }> {
    const mine = eq(c.userId, userId);
    const items = this.db
      .select()
      .from(c)
      .where(page.activeSince ? and(mine, gte(c.lastActivityAt, page.activeSince)) : mine)
      .orderBy(desc(c.lastActivityAt), desc(c.id))
      .limit(page.limit)
      .offset(page.offset)
      .all();
    const stored = this.db.select({ n: counts.count }).from(counts).where(eq(counts.userId, userId)).get()?.n ?? 0;
    // Expired but not yet swept: usually none, found through the same index.
    const expired = page.activeSince
      ? (this.db.select({ n: count() }).from(c).where(and(mine, lt(c.lastActivityAt, page.activeSince))).get()?.n ?? 0)
      : 0;
    return { items, total: stored - expired };
  }

  async deleteConversation(id: string): Promise<boolean> {
    return this.db.transaction((tx) => {
      const gone = tx.delete(c).where(eq(c.id, id)).returning({ userId: c.userId }).all();
      for (const { userId } of gone) {
        tx.update(counts).set({ count: sql`${counts.count} - 1` }).where(eq(counts.userId, userId)).run();
      }
      return gone.length > 0;
    });
  }

  async appendMessages(conversationId: string, batch: NewMessage[], options: AppendOptions): Promise<AppendResult | undefined> {
    const tokens = tokensOf(batch);
    return this.db.transaction((tx) => {
      const conversation = tx
        .update(c)
        .set({
          totalTokens: sql`${c.totalTokens} + ${tokens}`,
          lastSeq: sql`${c.lastSeq} + ${batch.length}`,
          updatedAt: options.now,
          lastActivityAt: options.now,
          title: sql`coalesce(${c.title}, ${options.titleIfUnset})`,
        })
        .where(eq(c.id, conversationId))
        .returning()
        .get();
      if (!conversation) return undefined;
      const rows = messageRows(conversationId, batch, conversation.lastSeq - batch.length + 1, options.now);
      const stored = rows.length > 0 ? tx.insert(m).values(rows).returning().all() : [];
      return { conversation, messages: stored };
    });
  }

  async listMessages(conversationId: string): Promise<MessageRecord[]> {
    return this.db.select().from(m).where(eq(m.conversationId, conversationId)).orderBy(asc(m.seq)).all();
  }

  async recentMessages(conversationId: string, limit: number, beforeSeq: number): Promise<MessageRecord[]> {
    if (limit <= 0) return [];
    const rows = this.db
      .select()
      .from(m)
      .where(and(eq(m.conversationId, conversationId), eq(m.isSummary, false), lt(m.seq, beforeSeq)))
      .orderBy(desc(m.seq))
      .limit(limit)
      .all();
    return rows.reverse();
  }

  async latestSummary(conversationId: string): Promise<MessageRecord | undefined> {
    return this.db
      .select()
      .from(m)
      .where(and(eq(m.conversationId, conversationId), eq(m.role, 'summary')))
      .orderBy(desc(m.seq))
      .limit(1)
      .get();
  }

  async countActiveMessages(conversationId: string): Promise<number> {
    const row = this.db
      .select({ n: count() })
      .from(m)
      .where(and(eq(m.conversationId, conversationId), eq(m.isSummary, false)))
      .get();
    return row?.n ?? 0;
  }

  async summarizableMessages(conversationId: string, keepRecent: number): Promise<MessageRecord[]> {
    const active = and(eq(m.conversationId, conversationId), eq(m.isSummary, false));
    const recent = this.db.select({ seq: m.seq }).from(m).where(active).orderBy(desc(m.seq)).limit(1).offset(keepRecent).get();
    if (!recent) return [];
    return this.db.select().from(m).where(and(active, lte(m.seq, recent.seq))).orderBy(asc(m.seq)).all();
  }

  async applySummary(conversationId: string, summary: NewSummary): Promise<{ conversation: ConversationRecord; summary: MessageRecord } | undefined> {
    return this.db.transaction((tx) => {
      if (!tx.select({ id: c.id }).from(c).where(eq(c.id, conversationId)).get()) return undefined;
      const covered = and(eq(m.conversationId, conversationId), eq(m.isSummary, false), lte(m.seq, summary.upToSeq));
      const summarized = Number(tx.select({ tokens: sum(m.tokenCount) }).from(m).where(covered).get()?.tokens ?? 0);
      tx.update(m).set({ isSummary: true }).where(covered).run();
      const previous = tx
        .select({ tokens: m.tokenCount })
        .from(m)
        .where(and(eq(m.conversationId, conversationId), eq(m.role, 'summary')))
        .orderBy(desc(m.seq))
        .limit(1)
        .get();
      const conversation = tx
        .update(c)
        .set({
          totalTokens: sql`${c.totalTokens} - ${summarized + (previous?.tokens ?? 0)} + ${summary.tokenCount}`,
          lastSeq: sql`${c.lastSeq} + 1`,
          updatedAt: summary.now,
          lastActivityAt: summary.now,
        })
        .where(eq(c.id, conversationId))
        .returning()
        .get()!;
      const stored = tx
        .insert(m)
        .values(summaryRow(conversationId, summary, conversation.lastSeq))
        .returning()
        .get();
      return { conversation, summary: stored };
    });
  }

  async acquireTurn(conversationId: string, token: string, now: Date, until: Date): Promise<boolean> {
    const taken = this.db
      .update(c)
      .set({ busyToken: token, busyUntil: until })
      .where(and(eq(c.id, conversationId), or(isNull(c.busyUntil), lt(c.busyUntil, now))))
      .returning({ id: c.id })
      .all();
    return taken.length > 0;
  }

  async renewTurn(conversationId: string, token: string, until: Date): Promise<void> {
    this.db.update(c).set({ busyUntil: until }).where(and(eq(c.id, conversationId), eq(c.busyToken, token))).run();
  }

  async releaseTurn(conversationId: string, token: string): Promise<void> {
    this.db.update(c).set({ busyToken: null, busyUntil: null }).where(and(eq(c.id, conversationId), eq(c.busyToken, token))).run();
  }

  async deleteIdleSince(cutoff: Date): Promise<number> {
    return this.db.transaction((tx) => {
      const gone = tx.delete(c).where(lt(c.lastActivityAt, cutoff)).returning({ userId: c.userId }).all();
      for (const [userId, n] of countPerUser(gone)) {
        tx.update(counts).set({ count: sql`${counts.count} - ${n}` }).where(eq(counts.userId, userId)).run();
      }
      return gone.length;
    });
  }

  async close(): Promise<void> {
    this.client.close();
  }
}
