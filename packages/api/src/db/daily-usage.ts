import { and, eq, gte, sql } from 'drizzle-orm';
import { startOfUtcDay } from '../util/utc-day.js';
import type { Db, DialectAdapter } from './dialect.js';

type Tables = DialectAdapter['tables'];

/**
 * The per-user, per-UTC-day ledger of runs created and tokens they used (`user_daily_usage`).
 * The daily quotas and `/me` read it instead of counting the runs table: a run's row goes with its
 * conversation, or at its retention, and what it cost must not go with it (a user who deleted a
 * conversation would otherwise get that day's runs and tokens back).
 */
export async function addDailyUsage(tables: Tables, tx: Db, userId: string, createdAt: Date, used: { runs: number; tokens: number }): Promise<void> {
  const u = tables.userDailyUsage;
  await tx
    .insert(u)
    .values({ userId, day: startOfUtcDay(createdAt), runs: used.runs, tokens: used.tokens })
    .onConflictDoUpdate({ target: [u.userId, u.day], set: { runs: sql`${u.runs} + ${used.runs}`, tokens: sql`${u.tokens} + ${used.tokens}` } });
}

/** The runs a user created since `since` (a UTC midnight), and the tokens those runs used. */
export async function dailyUsageSince(tables: Tables, db: Db, userId: string, since: Date): Promise<{ runs: number; tokens: number }> {
  const u = tables.userDailyUsage;
  const [used] = await db
    .select({ runs: sql<number>`coalesce(sum(${u.runs}), 0)`.mapWith(Number), tokens: sql<number>`coalesce(sum(${u.tokens}), 0)`.mapWith(Number) })
    .from(u)
    .where(and(eq(u.userId, userId), gte(u.day, startOfUtcDay(since))));
  return { runs: used?.runs ?? 0, tokens: used?.tokens ?? 0 };
}
