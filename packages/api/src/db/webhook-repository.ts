/** Users' webhooks and their deliveries (TEAMS.md section 13), for both dialects. */

export type WebhookEvent = 'approval_requested' | 'run_ended';
export type DeliveryStatus = 'pending' | 'delivered' | 'failed';

export interface WebhookRecord {
  id: string;
  userId: string;
  url: string;
  events: WebhookEvent[];
  /** Signs each delivery; never logged, shown once when the service made it. */
  secret: string;
  createdAt: Date;
}

export interface DeliveryRecord {
  id: string;
  webhookId: string;
  event: WebhookEvent;
  /** The JSON body exactly as signed and sent. */
  body: string;
  status: DeliveryStatus;
  attempts: number;
  createdAt: Date;
  nextAttemptAt: Date;
  claimedUntil: Date | null;
  lastAttemptAt: Date | null;
  lastStatusCode: number | null;
  /** What went wrong, as a short kind (`timeout`, `connection`, `address_refused`...), never the receiver's text. */
  lastError: string | null;
  deliveredAt: Date | null;
}

/** A claimed delivery with what sending it needs. */
export interface ClaimedDelivery extends DeliveryRecord {
  /** The webhook's owner: the sender shares itself out between owners. */
  userId: string;
  url: string;
  secret: string;
  /** The webhook's owner is a stored user who is disabled now: nothing of theirs is sent. */
  ownerDisabled: boolean;
}

export interface NewDelivery {
  id: string;
  event: WebhookEvent;
  body: string;
}

/** The outcome of one attempt: delivered, to be tried again at `retryAt`, or given up (`retryAt` null). */
export interface AttemptOutcome {
  at: Date;
  delivered: boolean;
  statusCode: number | null;
  error: string | null;
  retryAt: Date | null;
}

/** Raised inside the creating transaction: the user already has `max` webhooks. */
export class WebhookLimitReached extends Error {
  constructor(readonly max: number) {
    super(`webhook limit ${max} reached`);
  }
}

export interface WebhookRepository {
  /** Stores the webhook unless its user has `max` already (WebhookLimitReached); audited as `webhook.created`. */
  createWebhook(webhook: WebhookRecord, max: number): Promise<WebhookRecord>;
  listWebhooks(userId: string): Promise<WebhookRecord[]>;
  /** The user's webhook; undefined when unknown or another user's. */
  findWebhook(userId: string, id: string): Promise<WebhookRecord | undefined>;
  /** False when unknown or another user's; its deliveries go with it. Audited as `webhook.deleted`. */
  deleteWebhook(userId: string, id: string, now: Date): Promise<boolean>;
  /**
   * Stores a delivery for each of the user's webhooks that subscribe to the event; `make` gives
   * each its id and body. The deliveries stored. The service's own events are stored by the change
   * that causes them, in its transaction (a run's end, an approval's creation); this is the same
   * write on its own.
   */
  enqueueDeliveries(userId: string, event: WebhookEvent, now: Date, make: (webhook: WebhookRecord) => NewDelivery): Promise<DeliveryRecord[]>;
  /**
   * `listener` runs after each commit of this repository (runs, approvals, webhooks) that stored
   * deliveries: the sender looks at once. The function returned removes it.
   */
  onDeliveriesStored(listener: () => void): () => void;
  /** A webhook's deliveries, newest first. */
  listDeliveries(webhookId: string, limit: number): Promise<DeliveryRecord[]>;
  /**
   * Claims up to `limit` pending deliveries due by `now` whose claim has run out, until
   * `claimUntil`, counting the attempt, none of them of a webhook of a user in `skipUsers`. A row
   * is claimed by one caller only, on every replica.
   */
  claimDue(now: Date, claimUntil: Date, limit: number, skipUsers?: readonly string[]): Promise<ClaimedDelivery[]>;
  /** Records an attempt's outcome if the claim is still the caller's; false when it was not. */
  recordAttempt(delivery: ClaimedDelivery, outcome: AttemptOutcome): Promise<boolean>;
  /** When the next pending delivery nobody has claimed at `now` falls due; undefined when there is none. */
  nextDue(now: Date): Promise<Date | undefined>;
  /** Deletes finished deliveries created before `cutoff`; how many. */
  deleteFinishedBefore(cutoff: Date): Promise<number>;
}
