import { and, asc, count, desc, eq, inArray, isNull, lt, lte, ne, notInArray, or, sql } from 'drizzle-orm';
import type { DialectAdapter } from './dialect.js';
import { appendAuditIn } from './drizzle-audit-repository.js';
import { toDelivery, webhookEvents, type DeliveryOutbox } from './webhook-deliveries.js';
import {
  WebhookLimitReached,
  type AttemptOutcome,
  type ClaimedDelivery,
  type DeliveryRecord,
  type NewDelivery,
  type WebhookEvent,
  type WebhookRecord,
  type WebhookRepository,
} from './webhook-repository.js';

/** The advisory lock a user's webhook creations take on PostgreSQL ("mada" then "whks"): count and insert are one step. */
const WEBHOOKS_LOCK = 0x77686b73;

/** Webhooks and their deliveries over drizzle, for both dialects. */
export class DrizzleWebhookRepository implements WebhookRepository {
  private readonly t;

  constructor(
    private readonly adapter: DialectAdapter,
    private readonly outbox: DeliveryOutbox,
  ) {
    this.t = adapter.tables;
  }

  createWebhook(webhook: WebhookRecord, max: number): Promise<WebhookRecord> {
    const w = this.t.webhooks;
    return this.adapter.transaction(async (tx) => {
      if (this.adapter.dialect === 'postgres') await tx.execute(sql`select pg_advisory_xact_lock(${WEBHOOKS_LOCK}, hashtext(${webhook.userId}))`);
      const [existing] = await tx.select({ n: count() }).from(w).where(eq(w.userId, webhook.userId));
      if ((existing?.n ?? 0) >= max) throw new WebhookLimitReached(max);
      const [stored] = await tx
        .insert(w)
        .values({ ...webhook, events: JSON.stringify(webhook.events) })
        .returning();
      // The URL's host only: a path or query may carry a receiver's token (ntfy topics, Slack hooks).
      const detail = { user: webhook.userId, host: new URL(webhook.url).host, events: webhook.events };
      await appendAuditIn(this.adapter, tx, { at: webhook.createdAt, actor: webhook.userId, action: 'webhook.created', target: `webhook:${webhook.id}`, detail });
      return toWebhook(stored!);
    });
  }

  listWebhooks(userId: string): Promise<WebhookRecord[]> {
    const w = this.t.webhooks;
    return this.adapter.run(async (db) => (await db.select().from(w).where(eq(w.userId, userId)).orderBy(desc(w.createdAt), desc(w.id))).map(toWebhook));
  }

  findWebhook(userId: string, id: string): Promise<WebhookRecord | undefined> {
    const w = this.t.webhooks;
    return this.adapter.run(async (db) => {
      const [row] = await db
        .select()
        .from(w)
        .where(and(eq(w.id, id), eq(w.userId, userId)));
      return row === undefined ? undefined : toWebhook(row);
    });
  }

  deleteWebhook(userId: string, id: string, now: Date): Promise<boolean> {
    const w = this.t.webhooks;
    return this.adapter.transaction(async (tx) => {
      const deleted = await tx
        .delete(w)
        .where(and(eq(w.id, id), eq(w.userId, userId)))
        .returning({ id: w.id });
      if (deleted.length === 0) return false;
      await appendAuditIn(this.adapter, tx, { at: now, actor: userId, action: 'webhook.deleted', target: `webhook:${id}`, detail: { user: userId } });
      return true;
    });
  }

  async enqueueDeliveries(userId: string, event: WebhookEvent, now: Date, make: (webhook: WebhookRecord) => NewDelivery): Promise<DeliveryRecord[]> {
    const stored = await this.adapter.transaction((tx) => this.outbox.storeIn(tx, userId, event, now, make));
    if (stored.length > 0) this.outbox.wake();
    return stored;
  }

  onDeliveriesStored(listener: () => void): () => void {
    return this.outbox.onStored(listener);
  }

  listDeliveries(webhookId: string, limit: number): Promise<DeliveryRecord[]> {
    const d = this.t.webhookDeliveries;
    return this.adapter.run(async (db) =>
      (await db.select().from(d).where(eq(d.webhookId, webhookId)).orderBy(desc(d.createdAt), desc(d.id)).limit(limit)).map(toDelivery),
    );
  }

  async claimDue(now: Date, claimUntil: Date, limit: number, skipUsers: readonly string[] = []): Promise<ClaimedDelivery[]> {
    const { webhooks: w, webhookDeliveries: d } = this.t;
    const pending = and(eq(d.status, 'pending'), lte(d.nextAttemptAt, now), or(isNull(d.claimedUntil), lt(d.claimedUntil, now)));
    // One statement, so no transaction: SQLite takes its write lock at once (a transaction that
    // read first could not upgrade while another connection writes). The UPDATE checks the
    // condition again: on PostgreSQL a row another replica claimed meanwhile is re-read after its
    // commit and no longer matches, and SKIP LOCKED lets concurrent claimers pass each other's rows.
    const claimed = await this.adapter.run((db) => {
      // The users the sender has enough of in flight: their webhooks wait, others' go first.
      const claimable = skipUsers.length === 0 ? pending : and(pending, notInArray(d.webhookId, db.select({ id: w.id }).from(w).where(inArray(w.userId, [...skipUsers]))));
      const candidates = db.select({ id: d.id }).from(d).where(claimable).orderBy(asc(d.nextAttemptAt)).limit(limit);
      const due = this.adapter.dialect === 'postgres' ? candidates.for('update', { skipLocked: true }) : candidates;
      return db
        .update(d)
        .set({ claimedUntil: claimUntil, attempts: sql`${d.attempts} + 1`, lastAttemptAt: now })
        .where(and(inArray(d.id, due), claimable))
        .returning();
    });
    if (claimed.length === 0) return [];
    const ids = [...new Set(claimed.map((row) => row.webhookId))];
    const u = this.t.users;
    // Users of API_KEYS have no row: they are never disabled.
    const targets = await this.adapter.run((db) =>
      db.select({ id: w.id, userId: w.userId, url: w.url, secret: w.secret, disabled: u.disabled }).from(w).leftJoin(u, eq(u.id, w.userId)).where(inArray(w.id, ids)),
    );
    const byId = new Map(targets.map((target) => [target.id, target]));
    // A webhook deleted meanwhile took its deliveries with it: nothing to send.
    return claimed.flatMap((row) => {
      const target = byId.get(row.webhookId);
      return target === undefined ? [] : [{ ...toDelivery(row), userId: target.userId, url: target.url, secret: target.secret, ownerDisabled: target.disabled === true }];
    });
  }

  async recordAttempt(delivery: ClaimedDelivery, outcome: AttemptOutcome): Promise<boolean> {
    const d = this.t.webhookDeliveries;
    const status = outcome.delivered ? 'delivered' : outcome.retryAt === null ? 'failed' : 'pending';
    const updated = await this.adapter.run((db) =>
      db
        .update(d)
        .set({
          status,
          claimedUntil: null,
          lastStatusCode: outcome.statusCode,
          lastError: outcome.error,
          nextAttemptAt: outcome.retryAt ?? outcome.at,
          deliveredAt: outcome.delivered ? outcome.at : null,
        })
        .where(and(eq(d.id, delivery.id), eq(d.status, 'pending'), delivery.claimedUntil === null ? isNull(d.claimedUntil) : eq(d.claimedUntil, delivery.claimedUntil)))
        .returning({ id: d.id }),
    );
    return updated.length > 0;
  }

  nextDue(now: Date): Promise<Date | undefined> {
    const d = this.t.webhookDeliveries;
    return this.adapter.run(async (db) => {
      const [row] = await db
        .select({ at: d.nextAttemptAt })
        .from(d)
        .where(and(eq(d.status, 'pending'), or(isNull(d.claimedUntil), lt(d.claimedUntil, now))))
        .orderBy(asc(d.nextAttemptAt))
        .limit(1);
      return row?.at;
    });
  }

  deleteFinishedBefore(cutoff: Date): Promise<number> {
    const d = this.t.webhookDeliveries;
    return this.adapter.run(async (db) => (await db.delete(d).where(and(ne(d.status, 'pending'), lt(d.createdAt, cutoff))).returning({ id: d.id })).length);
  }
}

interface WebhookRow extends Omit<WebhookRecord, 'events'> {
  events: string;
}

function toWebhook(row: WebhookRow): WebhookRecord {
  return { ...row, events: webhookEvents(row.events) };
}
