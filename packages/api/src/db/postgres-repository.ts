import { fileURLToPath } from 'node:url';
import { and, asc, count, desc, eq, gte, lt, sql } from 'drizzle-orm';
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
} from './repository.js';
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
    const tokens = batch.reduce((sum, message) => sum + message.tokenCount, 0);
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
      const first = conversation.lastSeq - batch.length + 1;
      const rows = batch.map((message, i) => ({
        ...message,
        conversationId,
        seq: first + i,
        isSummary: false,
        summarizesUpTo: null,
        createdAt: options.now,
      }));
      const stored = rows.length > 0 ? await tx.insert(m).values(rows).returning() : [];
      return { conversation, messages: stored };
    });
  }

  async listMessages(conversationId: string): Promise<MessageRecord[]> {
    return this.db.select().from(m).where(eq(m.conversationId, conversationId)).orderBy(asc(m.seq));
  }

  async deleteIdleSince(cutoff: Date): Promise<number> {
    return this.db.transaction(async (tx) => {
      const gone = await tx.delete(c).where(lt(c.lastActivityAt, cutoff)).returning({ userId: c.userId });
      const perUser = new Map<string, number>();
      for (const { userId } of gone) perUser.set(userId, (perUser.get(userId) ?? 0) + 1);
      for (const [userId, n] of perUser) {
        await tx.update(counts).set({ count: sql`${counts.count} - ${n}` }).where(eq(counts.userId, userId));
      }
      return gone.length;
    });
  }

  async close(): Promise<void> {
    await this.pool.end();
  }
}
