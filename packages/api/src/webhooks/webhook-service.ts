import { randomBytes, randomUUID } from 'node:crypto';
import type { DeliveryRecord, WebhookEvent, WebhookRecord, WebhookRepository } from '../db/webhook-repository.js';
import { WebhookLimitReached } from '../db/webhook-repository.js';
import { WebhookLimitError, WebhookNotFoundError } from './errors.js';
import { HostResolver } from './host-resolver.js';
import { checkWebhookUrl } from './webhook-url.js';

/** Webhooks a user may have at once. */
export const MAX_WEBHOOKS_PER_USER = 20;
/** Deliveries `GET /me/webhooks/{id}/deliveries` shows, newest first. */
export const LISTED_DELIVERIES = 100;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export interface WebhookServiceOptions {
  store: WebhookRepository;
  allowPrivate: boolean;
  now: () => Date;
  /** Shared with the sender, so that the cap on lookups is the service's (host-resolver.ts). */
  resolver?: HostResolver;
}

/**
 * Users' webhooks (their routes) and their deliveries. An event becomes one stored delivery per
 * subscribed webhook, written by the database with the change that causes it (a run's end, an
 * approval's creation); the sender (dispatcher.ts) posts them and retries.
 */
export class WebhookService {
  private readonly resolver: HostResolver;

  constructor(private readonly options: WebhookServiceOptions) {
    this.resolver = options.resolver ?? new HostResolver();
  }

  /** Stores a webhook; `secret` is made when absent. The record carries it: the route shows it this once. */
  async create(userId: string, input: { url: string; events: WebhookEvent[]; secret?: string | undefined }): Promise<WebhookRecord> {
    const url = await checkWebhookUrl(input.url, this.options.allowPrivate, this.resolver);
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
}
