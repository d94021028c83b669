import { randomBytes, randomUUID } from 'node:crypto';
import type { DeliveryRecord, WebhookEvent, WebhookRecord, WebhookRepository } from '../db/webhook-repository.js';
import { WebhookLimitReached } from '../db/webhook-repository.js';
import type { Log } from '../util/log.js';
import { WebhookLimitError, WebhookNotFoundError } from './errors.js';
import { checkWebhookUrl } from './webhook-url.js';

/** Webhooks a user may have at once. */
export const MAX_WEBHOOKS_PER_USER = 20;
/** Deliveries `GET /me/webhooks/{id}/deliveries` shows, newest first. */
export const LISTED_DELIVERIES = 100;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** What a delivery's body says (TEAMS.md section 13): the event, when, the run, and the approval's tool or the run's final status. */
export interface WebhookNotice {
  userId: string;
  event: WebhookEvent;
  at: Date;
  runId: string;
  approvalId?: string;
  tool?: string;
  status?: string;
}

export interface WebhookServiceOptions {
  store: WebhookRepository;
  allowPrivate: boolean;
  now: () => Date;
  log: Log;
  /** Called once deliveries are stored, so the sender tries them at once. */
  onQueued?: () => void;
}

/**
 * Users' webhooks (their routes) and the events that feed them. An event becomes one stored
 * delivery per subscribed webhook; the sender (dispatcher.ts) posts them and retries.
 */
export class WebhookService {
  private readonly pending = new Set<Promise<unknown>>();

  constructor(private readonly options: WebhookServiceOptions) {}

  /** Stores a webhook; `secret` is made when absent. The record carries it: the route shows it this once. */
  async create(userId: string, input: { url: string; events: WebhookEvent[]; secret?: string | undefined }): Promise<WebhookRecord> {
    const url = await checkWebhookUrl(input.url, this.options.allowPrivate);
    const record: WebhookRecord = {
      id: randomUUID(),
      userId,
      url: url.href,
      events: [...new Set(input.events)],
      secret: input.secret ?? `whsec_${randomBytes(32).toString('base64url')}`,
      createdAt: this.options.now(),
    };
    try {
      return await this.options.store.createWebhook(record, MAX_WEBHOOKS_PER_USER);
    } catch (error) {
      if (error instanceof WebhookLimitReached) throw new WebhookLimitError(error.max);
      throw error;
    }
  }

  list(userId: string): Promise<WebhookRecord[]> {
    return this.options.store.listWebhooks(userId);
  }

  /** 404 `Webhook not found` for an unknown id and for another user's. */
  async get(userId: string, id: string): Promise<WebhookRecord> {
    // PostgreSQL refuses to compare a uuid column with text that is not one.
    const found = UUID.test(id) ? await this.options.store.findWebhook(userId, id.toLowerCase()) : undefined;
    if (!found) throw new WebhookNotFoundError();
    return found;
  }

  async delete(userId: string, id: string): Promise<void> {
    if (!UUID.test(id) || !(await this.options.store.deleteWebhook(userId, id.toLowerCase(), this.options.now()))) throw new WebhookNotFoundError();
  }

  async deliveries(userId: string, id: string): Promise<DeliveryRecord[]> {
    const webhook = await this.get(userId, id);
    return this.options.store.listDeliveries(webhook.id, LISTED_DELIVERIES);
  }

  /**
   * Stores the deliveries of an event. Not awaited by the run that caused it (a slow database must
   * not hold a run up), but tracked: `flush` (at shutdown) waits for every one of them.
   */
  notify(notice: WebhookNotice): void {
    const stored = this.enqueue(notice).catch((error: unknown) =>
      this.options.log.error({ err: error, run_id: notice.runId, event: notice.event }, 'could not store webhook deliveries'),
    );
    this.pending.add(stored);
    void stored.finally(() => this.pending.delete(stored));
  }

  /** Waits for the deliveries of every event notified so far to be stored. */
  async flush(): Promise<void> {
    while (this.pending.size > 0) await Promise.allSettled([...this.pending]);
  }

  private async enqueue(notice: WebhookNotice): Promise<void> {
    const body = JSON.stringify({
      event: notice.event,
      at: notice.at.toISOString(),
      run_id: notice.runId,
      ...(notice.approvalId === undefined ? {} : { approval_id: notice.approvalId }),
      ...(notice.tool === undefined ? {} : { tool: notice.tool }),
      ...(notice.status === undefined ? {} : { status: notice.status }),
    });
    const stored = await this.options.store.enqueueDeliveries(notice.userId, notice.event, this.options.now(), () => ({ id: randomUUID(), event: notice.event, body }));
    if (stored.length > 0) this.options.onQueued?.();
  }
}
