import { and, eq, gte, sql } from 'drizzle-orm';
import { startOfUtcDay } from '../util/utc-day.js';
import { perAdapter, type Db, type DialectAdapter } from './dialect.js';

type Tables = DialectAdapter['tables'];

/** What a user's runs used of one model; `model` null: counted before the ledger kept models. */
export interface UsageOfModel {
  model: string | null;
  runs: number;
  tokens: number;
}

/** A run's additions to the ledger, prepared once: every run adds to it when it starts and when it ends. */
const additions = perAdapter((adapter) => {
  const { userDailyUsage: u, userModelDailyUsage: m } = adapter.tables;
  const p = (name: string) => sql.placeholder(name);
  return {
    user: adapter.prepared('daily_usage_add', (db) =>
      db
        .insert(u)
        .values({ userId: p('userId'), day: p('day'), runs: p('runs'), tokens: p('tokens') })
        .onConflictDoUpdate({ target: [u.userId, u.day], set: { runs: sql`${u.runs} + ${p('runs')}`, tokens: sql`${u.tokens} + ${p('tokens')}` } }),
    ),
    model: adapter.prepared('model_daily_usage_add', (db) =>
      db
        .insert(m)
        .values({ userId: p('userId'), day: p('day'), model: p('model'), runs: p('runs'), tokens: p('tokens') })
        .onConflictDoUpdate({ target: [m.userId, m.day, m.model], set: { runs: sql`${m.runs} + ${p('runs')}`, tokens: sql`${m.tokens} + ${p('tokens')}` } }),
    ),
  };
});

/**
 * The per-user, per-UTC-day ledger of runs created and tokens they used (`user_daily_usage`), and
 * the same per model (`user_model_daily_usage`) for runs that name one. The daily quotas and `/me`
 * read them instead of counting the runs table: a run's row goes with its conversation, or at its
 * retention, and what it cost must not go with it (a user who deleted a conversation would
 * otherwise get that day's runs and tokens back).
 */
export async function addDailyUsage(adapter: DialectAdapter, tx: Db, userId: string, createdAt: Date, model: string | null, used: { runs: number; tokens: number }): Promise<void> {
  const statements = additions(adapter);
  const values = { userId, day: startOfUtcDay(createdAt), runs: used.runs, tokens: used.tokens };
  await statements.user(tx, values);
  if (model !== null) await statements.model(tx, { ...values, model });
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

/**
 * The same per model, by model name. What the totals (dailyUsageSince) count beyond the models'
 * rows comes last with `model: null`: runs of the day of the upgrade that introduced the per-model
 * ledger, deleted before it, or created meanwhile by a replica of the version before.
 */
export async function dailyUsageByModelSince(tables: Tables, db: Db, userId: string, since: Date, total: { runs: number; tokens: number }): Promise<UsageOfModel[]> {
  const m = tables.userModelDailyUsage;
  const rows = await db
    .select({ model: m.model, runs: sql<number>`sum(${m.runs})`.mapWith(Number), tokens: sql<number>`sum(${m.tokens})`.mapWith(Number) })
    .from(m)
    .where(and(eq(m.userId, userId), gte(m.day, startOfUtcDay(since))))
    .groupBy(m.model);
  // Sorted here: the two databases' collations order names differently.
  rows.sort((a, b) => (a.model < b.model ? -1 : a.model > b.model ? 1 : 0));
  const rest = {
    runs: Math.max(0, total.runs - rows.reduce((sum, row) => sum + row.runs, 0)),
    tokens: Math.max(0, total.tokens - rows.reduce((sum, row) => sum + row.tokens, 0)),
  };
  return rest.runs > 0 || rest.tokens > 0 ? [...rows, { model: null, ...rest }] : rows;
}
