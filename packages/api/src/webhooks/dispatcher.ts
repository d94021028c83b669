import type { ClaimedDelivery, WebhookRepository } from '../db/webhook-repository.js';
import type { Log } from '../util/log.js';
import { Wake } from '../util/wake.js';
import { nextAttempt } from './backoff.js';
import { sendDelivery, SEND_TIMEOUT_MS, type SendResult } from './send.js';

/** Finished deliveries are kept this long for `GET .../deliveries`, then deleted. */
const KEEP_FINISHED_MS = 7 * 86_400_000;
const SWEEP_INTERVAL_MS = 3_600_000;

export interface DispatcherOptions {
  store: WebhookRepository;
  allowPrivate: boolean;
  /** The first retry's delay (WEBHOOK_RETRY_BASE_SECONDS); doubled after each failed attempt. */
  retryBaseMs: number;
  userAgent: string;
  now: () => Date;
  log: Log;
  /** How often the store is looked at without a wake-up: deliveries another replica stored or gave up. */
  pollMs?: number;
  /** Deliveries sent at once. */
  concurrency?: number;
}

/**
 * Sends stored deliveries. Every replica runs one; a delivery is claimed (one conditional UPDATE,
 * db/drizzle-webhook-repository.ts) before it is sent, so it is sent by one of them, and a claim
 * outlives a send's timeout several times over, so it never runs out while the send is going on.
 * A delivery stored before a restart is sent after it: nothing is kept in memory but the wake-up.
 */
export class WebhookDispatcher {
  private readonly wake = new Wake();
  private stopped = false;
  private loop: Promise<void> | undefined;
  private lastSweep = 0;
  private readonly pollMs: number;
  private readonly concurrency: number;

  constructor(private readonly options: DispatcherOptions) {
    this.pollMs = options.pollMs ?? 5000;
    this.concurrency = options.concurrency ?? 8;
  }

  /** Tells the sender that deliveries were stored: it looks at once. */
  readonly notify = (): void => this.wake.notify();

  start(): void {
    this.loop ??= this.run();
  }

  /** Stops looking; waits for the sends under way (each ends within its timeout) to be recorded. */
  async close(): Promise<void> {
    this.stopped = true;
    this.wake.notify();
    await this.loop;
  }

  private async run(): Promise<void> {
    while (!this.stopped) {
      let waitMs = this.pollMs;
      try {
        await this.sendDue();
        await this.sweep();
        const next = await this.options.store.nextDue(this.options.now());
        if (next !== undefined) waitMs = Math.min(this.pollMs, Math.max(0, next.getTime() - this.options.now().getTime()));
      } catch (error) {
        this.options.log.warn({ err: error }, 'webhook deliveries could not be read; trying again');
      }
      if (!this.stopped) await this.sleep(waitMs);
    }
  }

  private async sendDue(): Promise<void> {
    while (!this.stopped) {
      const now = this.options.now();
      // Several timeouts long: a claim must not run out while its send is still going on.
      const claimed = await this.options.store.claimDue(now, new Date(now.getTime() + 6 * SEND_TIMEOUT_MS), this.concurrency);
      if (claimed.length === 0) return;
      await Promise.all(claimed.map((delivery) => this.attempt(delivery)));
    }
  }

  private async attempt(delivery: ClaimedDelivery): Promise<void> {
    const result = await this.send(delivery);
    const at = this.options.now();
    // A disabled user's deliveries are given up, never held: nothing goes out on their behalf,
    // and enabling them again does not send a backlog.
    const retryAt = result.delivered || delivery.ownerDisabled ? null : nextAttempt(delivery.createdAt, delivery.attempts, at, this.options.retryBaseMs);
    // The webhook and delivery ids only: the URL's path may carry a receiver's token, and the secret is never logged.
    const fields = { webhook_id: delivery.webhookId, delivery_id: delivery.id, attempt: delivery.attempts, status_code: result.statusCode, error: result.error };
    try {
      await this.options.store.recordAttempt(delivery, { at, ...result, retryAt });
    } catch (error) {
      // The claim runs out and the delivery is tried again: sent twice rather than lost.
      this.options.log.warn({ ...fields, err: error }, 'could not record a webhook delivery attempt');
      return;
    }
    if (result.delivered) this.options.log.debug(fields, 'webhook delivered');
    else if (delivery.ownerDisabled) this.options.log.info(fields, 'webhook delivery dropped: its owner is disabled');
    else if (retryAt === null) this.options.log.warn(fields, 'webhook delivery given up after 24 h');
    else this.options.log.info({ ...fields, retry_at: retryAt.toISOString() }, 'webhook delivery failed; will retry');
  }

  private async send(delivery: ClaimedDelivery): Promise<SendResult> {
    if (delivery.ownerDisabled) return { delivered: false, statusCode: null, error: 'owner_disabled' };
    try {
      return await sendDelivery(delivery, { allowPrivate: this.options.allowPrivate, userAgent: this.options.userAgent });
    } catch {
      return { delivered: false, statusCode: null, error: 'connection' };
    }
  }

  private async sweep(): Promise<void> {
    const now = this.options.now().getTime();
    if (now - this.lastSweep < SWEEP_INTERVAL_MS) return;
    this.lastSweep = now;
    await this.options.store.deleteFinishedBefore(new Date(now - KEEP_FINISHED_MS));
  }

  private async sleep(ms: number): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([this.wake.next(), new Promise<void>((resolve) => (timer = setTimeout(resolve, ms)))]);
    clearTimeout(timer);
  }
}
