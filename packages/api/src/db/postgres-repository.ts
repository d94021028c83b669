import { fileURLToPath } from 'node:url';
import { and, asc, count, desc, eq, gte, isNull, lt, lte, or, sql, sum } from 'drizzle-orm';
import type { Logger as DrizzleLogger } from 'drizzle-orm/logger';
import { drizzle, type NodePgDatabase } from 'drizzle-orm/node-postgres';
import { migrate } from 'drizzle-orm/node-postgres/migrator';
import pg from 'pg';
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
import { conversations as c, messages as m, userConversationCounts as counts } from './schema/postgres.js';
import * as schema from './schema/postgres.js';

const MIGRATIONS = fileURLToPath(new URL('../../migrations/postgres', import.meta.url));

/** Arbitrary but fixed: the advisory lock key that serializes migrations across replicas. */
const MIGRATION_LOCK = 0x6d616461;

/** Several replicas may start at once on one database; only one may migrate at a time. */
async function migrateExclusively(pool: pg.Pool): Promise<void> {
  const client = await pool.connect();
  try {
    await client.query('select pg_advisory_lock($1)', [MIGRATION_LOCK]);
    await migrate(drizzle({ client }), { migrationsFolder: MIGRATIONS });
  } finally {
    await client.query('select pg_advisory_unlock($1)', [MIGRATION_LOCK]).catch(() => undefined);
    client.release();
  }
}

/**
 * Concurrency comes from row locks: appendMessages' UPDATE ... RETURNING locks the conversation
 * row until commit, so concurrent appends serialize on it and total_tokens and seq stay exact.
 */
export class PostgresRepository implements ConversationRepository {
  readonly dialect = 'postgres' as const;
  private readonly db: NodePgDatabase<typeof schema>;

  constructor(
    private readonly pool: pg.Pool,
    logger?: DrizzleLogger,
  ) {
    this.db = drizzle({ client: pool, schema, ...(logger ? { logger } : {}) });
  }

  static async open(url: string, logger?: DrizzleLogger): Promise<PostgresRepository> {
    const pool = new pg.Pool({ connectionString: url, max: 10, connectionTimeoutMillis: 10_000 });
    // An idle connection dropped by the server (restart, failover) must not crash the process;
    // the pool replaces it and the next query reports any lasting outage.
    pool.on('error', () => undefined);
    try {
      await migrateExclusively(pool);
    } catch (error) {
      await pool.end();
      throw error;
    }
    return new PostgresRepository(pool, logger);
  }

  async ping(): Promise<void> {
    await this.pool.query('select 1');
  }

  async createConversation(input: NewConversation): Promise<ConversationRecord> {
    return this.db.transaction(async (tx) => {
      const [row] = await tx
        .insert(c)
        .values({ ...input, createdAt: input.now, updatedAt: null, lastActivityAt: input.now })
        .returning();
      await tx
        .insert(counts)
        .values({ userId: input.userId, count: 1 })
        .onConflictDoUpdate({ target: counts.userId, set: { count: sql`${counts.count} + 1` } });
      return row!;
    });
  }

  async findConversation(id: string): Promise<ConversationRecord | undefined> {
    const [row] = await this.db.select().from(c).where(eq(c.id, id));
    return row;
  }

  async listConversations(userId: string, page: ListPage): Promise<{ items: ConversationRecord[]; total: number }> {
    const mine = eq(c.userId, userId);
    const [items, stored, expired] = await Promise.all([
      this.db
        .select()
        .from(c)
        .where(page.activeSince ? and(mine, gte(c.lastActivityAt, page.activeSince)) : mine)
        .orderBy(desc(c.lastActivityAt), desc(c.id))
        .limit(page.limit)
        .offset(page.offset),
      this.db.select({ n: counts.count }).from(counts).where(eq(counts.userId, userId)),
      page.activeSince
        ? this.db.select({ n: count() }).from(c).where(and(mine, lt(c.lastActivityAt, page.activeSince)))
        : Promise.resolve([{ n: 0 }]),
    ]);
    return { items, total: (stored[0]?.n ?? 0) - (expired[0]?.n ?? 0) };
  }

  async deleteConversation(id: string): Promise<boolean> {
    return this.db.transaction(async (tx) => {
      const gone = await tx.delete(c).where(eq(c.id, id)).returning({ userId: c.userId });
      for (const { userId } of gone) {
        await tx.update(counts).set({ count: sql`${counts.count} - 1` }).where(eq(counts.userId, userId));
      }
      return gone.length > 0;
    });
  }

  async appendMessages(conversationId: string, batch: NewMessage[], options: AppendOptions): Promise<AppendResult | undefined> {
    const tokens = tokensOf(batch);
    return this.db.transaction(async (tx) => {
      const [conversation] = await tx
        .update(c)
        .set({
          totalTokens: sql`${c.totalTokens} + ${tokens}`,
          lastSeq: sql`${c.lastSeq} + ${batch.length}`,
          updatedAt: options.now,
          lastActivityAt: options.now,
          title: sql`coalesce(${c.title}, ${options.titleIfUnset}::varchar)`,
        })
        .where(eq(c.id, conversationId))
        .returning();
      if (!conversation) return undefined;
      const rows = messageRows(conversationId, batch, conversation.lastSeq - batch.length + 1, options.now);
      const stored = rows.length > 0 ? await tx.insert(m).values(rows).returning() : [];
      return { conversation, messages: stored };
    });
  }

  async listMessages(conversationId: string): Promise<MessageRecord[]> {
    return this.db.select().from(m).where(eq(m.conversationId, conversationId)).orderBy(asc(m.seq));
  }

  async recentMessages(conversationId: string, limit: number, beforeSeq: number): Promise<MessageRecord[]> {
    if (limit <= 0) return [];
    const rows = await this.db
      .select()
      .from(m)
      .where(and(eq(m.conversationId, conversationId), eq(m.isSummary, false), lt(m.seq, beforeSeq)))
      .orderBy(desc(m.seq))
      .limit(limit);
    return rows.reverse();
  }

  async latestSummary(conversationId: string): Promise<MessageRecord | undefined> {
    const [row] = await this.db
      .select()
      .from(m)
      .where(and(eq(m.conversationId, conversationId), eq(m.role, 'summary')))
      .orderBy(desc(m.seq))
      .limit(1);
    return row;
  }

  async countActiveMessages(conversationId: string): Promise<number> {
    const [row] = await this.db
      .select({ n: count() })
      .from(m)
      .where(and(eq(m.conversationId, conversationId), eq(m.isSummary, false)));
    return row?.n ?? 0;
  }

  async summarizableMessages(conversationId: string, keepRecent: number): Promise<MessageRecord[]> {
    const active = and(eq(m.conversationId, conversationId), eq(m.isSummary, false));
    const [recent] = await this.db.select({ seq: m.seq }).from(m).where(active).orderBy(desc(m.seq)).limit(1).offset(keepRecent);
    if (!recent) return [];
    return this.db.select().from(m).where(and(active, lte(m.seq, recent.seq))).orderBy(asc(m.seq));
  }

  async applySummary(conversationId: string, summary: NewSummary): Promise<{ conversation: ConversationRecord; summary: MessageRecord } | undefined> {
    return this.db.transaction(async (tx) => {
      // Lock the conversation first: flags, totals and the new seq change together or not at all.
      const [locked] = await tx.select({ id: c.id }).from(c).where(eq(c.id, conversationId)).for('update');
      if (!locked) return undefined;
      const covered = and(eq(m.conversationId, conversationId), eq(m.isSummary, false), lte(m.seq, summary.upToSeq));
      const [summed] = await tx.select({ tokens: sum(m.tokenCount) }).from(m).where(covered);
      await tx.update(m).set({ isSummary: true }).where(covered);
      const [previous] = await tx
        .select({ tokens: m.tokenCount })
        .from(m)
        .where(and(eq(m.conversationId, conversationId), eq(m.role, 'summary')))
        .orderBy(desc(m.seq))
        .limit(1);
      const removed = Number(summed?.tokens ?? 0) + (previous?.tokens ?? 0);
      const [conversation] = await tx
        .update(c)
        .set({
          totalTokens: sql`${c.totalTokens} - ${removed} + ${summary.tokenCount}`,
          lastSeq: sql`${c.lastSeq} + 1`,
          updatedAt: summary.now,
          lastActivityAt: summary.now,
        })
        .where(eq(c.id, conversationId))
        .returning();
      const [stored] = await tx
        .insert(m)
        .values(summaryRow(conversationId, summary, conversation!.lastSeq))
        .returning();
      return { conversation: conversation!, summary: stored! };
    });
  }

  async acquireTurn(conversationId: string, token: string, now: Date, until: Date): Promise<boolean> {
    const taken = await this.db
      .update(c)
      .set({ busyToken: token, busyUntil: until })
      .where(and(eq(c.id, conversationId), or(isNull(c.busyUntil), lt(c.busyUntil, now))))
      .returning({ id: c.id });
    return taken.length > 0;
  }

  async renewTurn(conversationId: string, token: string, until: Date): Promise<void> {
    await this.db.update(c).set({ busyUntil: until }).where(and(eq(c.id, conversationId), eq(c.busyToken, token)));
  }

  async releaseTurn(conversationId: string, token: string): Promise<void> {
    await this.db.update(c).set({ busyToken: null, busyUntil: null }).where(and(eq(c.id, conversationId), eq(c.busyToken, token)));
  }

  async deleteIdleSince(cutoff: Date): Promise<number> {
    return this.db.transaction(async (tx) => {
      const gone = await tx.delete(c).where(lt(c.lastActivityAt, cutoff)).returning({ userId: c.userId });
      for (const [userId, n] of countPerUser(gone)) {
        await tx.update(counts).set({ count: sql`${counts.count} - ${n}` }).where(eq(counts.userId, userId));
      }
      return gone.length;
    });
  }

  async close(): Promise<void> {
    await this.pool.end();
  }
}
