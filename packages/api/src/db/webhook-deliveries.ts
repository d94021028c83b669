import { randomUUID } from 'node:crypto';
import { eq, sql } from 'drizzle-orm';
import type { Db, DialectAdapter, PreparedStatement } from './dialect.js';
import type { DeliveryRecord, NewDelivery, WebhookEvent, WebhookRecord } from './webhook-repository.js';

/** What an event's deliveries say (TEAMS.md section 13): the event, when, the run, and the approval's tool or the run's final status. */
export type WebhookNotice =
  | { event: 'run_ended'; at: Date; runId: string; status: string }
  | { event: 'approval_requested'; at: Date; runId: string; approvalId: string; tool: string };

/** Stores an event's deliveries in the caller's transaction. */
export type NoticeWriter = (userId: string, notice: WebhookNotice) => Promise<void>;

/** The body of a delivery (WebhookPayload), exactly as it is signed and sent on every attempt. */
export function deliveryBody(notice: WebhookNotice): string {
  const base = { event: notice.event, at: notice.at.toISOString(), run_id: notice.runId };
  return JSON.stringify(notice.event === 'run_ended' ? { ...base, status: notice.status } : { ...base, approval_id: notice.approvalId, tool: notice.tool });
}

/** `events` is the service's own JSON; a name it no longer knows is dropped rather than trusted. */
export function webhookEvents(text: string): WebhookEvent[] {
  const parsed: unknown = JSON.parse(text);
  return Array.isArray(parsed) ? parsed.filter((name): name is WebhookEvent => name === 'approval_requested' || name === 'run_ended') : [];
}

/**
 * Writes an event's deliveries in the same transaction as the change that causes it (a run's end,
 * an approval's creation), so a process killed after that commit has stored them too, and wakes
 * the sender once the transaction has committed. Every repository that causes events shares one.
 */
export class DeliveryOutbox {
  private readonly listeners = new Set<() => void>();
  /** Every run's end reads its owner's webhooks (usually none): prepared once, as the run's own statements are. */
  private readonly webhooksOf: PreparedStatement<(Omit<WebhookRecord, 'events'> & { events: string })[]>;

  constructor(private readonly adapter: DialectAdapter) {
    const w = adapter.tables.webhooks;
    this.webhooksOf = adapter.prepared('webhooks_of_user', (db) => {
      const query = db
        .select()
        .from(w)
        .where(eq(w.userId, sql.placeholder('userId')));
      // A webhook being deleted is waited for and then skipped, and one read here cannot be deleted
      // before the commit: the deliveries' foreign key never fails the run's end. SQLite writes one at a time.
      return adapter.dialect === 'postgres' ? query.for('key share') : query;
    });
  }

  /** `listener` runs after each commit that stored deliveries; the function returned removes it. */
  onStored(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /**
   * Runs `work` in one transaction; what it writes through `notice` is committed with the rest, or
   * not at all. The listeners hear of it after the commit.
   */
  async transaction<T>(work: (tx: Db, notice: NoticeWriter) => Promise<T>): Promise<T> {
    let stored = 0;
    const result = await this.adapter.transaction((tx) =>
      work(tx, async (userId, notice) => {
        const body = deliveryBody(notice);
        stored += (await this.storeIn(tx, userId, notice.event, notice.at, () => ({ id: randomUUID(), event: notice.event, body }))).length;
      }),
    );
    if (stored > 0) this.wake();
    return result;
  }

  /** Tells the listeners that a commit stored deliveries. */
  wake(): void {
    for (const listener of this.listeners) listener();
  }

  /** A delivery for each of the user's webhooks that subscribe to `event`, due at `now`. */
  async storeIn(tx: Db, userId: string, event: WebhookEvent, now: Date, make: (webhook: WebhookRecord) => NewDelivery): Promise<DeliveryRecord[]> {
    const subscribed = (await this.webhooksOf(tx, { userId })).map((row) => ({ ...row, events: webhookEvents(row.events) })).filter((webhook) => webhook.events.includes(event));
    if (subscribed.length === 0) return [];
    const rows = subscribed.map((webhook) => ({ ...make(webhook), webhookId: webhook.id, status: 'pending' as const, attempts: 0, createdAt: now, nextAttemptAt: now }));
    return (await tx.insert(this.adapter.tables.webhookDeliveries).values(rows).returning()).map(toDelivery);
  }
}

export const toDelivery = (row: Omit<DeliveryRecord, 'event'> & { event: string }): DeliveryRecord => ({ ...row, event: row.event as WebhookEvent });
