import type { ClaimedDelivery, WebhookRepository } from '../db/webhook-repository.js';
import type { Log } from '../util/log.js';
import { Wake } from '../util/wake.js';
import { nextAttempt } from './backoff.js';
import { HostResolver } from './host-resolver.js';
import { sendDelivery, SEND_TIMEOUT_MS, type SendResult } from './send.js';

/** Finished deliveries are kept this long for `GET .../deliveries`, then deleted. */
const KEEP_FINISHED_MS = 7 * 86_400_000;
const SWEEP_INTERVAL_MS = 3_600_000;
/**
 * Deliveries of one user's webhooks in flight at once. Each of a user's receivers that never
 * answers holds a send for its whole timeout, and a user has up to 20 webhooks: without a share
 * of their own, one user's runs could keep every send busy and another user's approval wait
 * behind them for as long as they keep it up.
 */
export const SENDS_PER_USER = 2;

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
  /** Deliveries of one user's webhooks sent at once (SENDS_PER_USER). */
  perUser?: number;
  /** Shared with the webhook routes, so that the cap on lookups is the service's (host-resolver.ts). */
  resolver?: HostResolver;
}

/**
 * Sends stored deliveries. Every replica runs one; a delivery is claimed (one conditional UPDATE,
 * db/drizzle-webhook-repository.ts) before it is sent, so it is sent by one of them, and a claim
 * outlives a send's timeout several times over, so it never runs out while the send is going on.
 * A delivery stored before a restart is sent after it: nothing is kept in memory but the wake-up
 * and the sends in flight. Sends are a pool, each slot taken again as soon as its send ends, and
 * a user with SENDS_PER_USER in flight has the next claims pass over their deliveries: a slow
 * receiver holds its own slot, never a batch of others', and never another user's turn.
 */
export class WebhookDispatcher {
  private readonly wake = new Wake();
  private stopped = false;
  private loop: Promise<void> | undefined;
  private lastSweep = 0;
  private readonly pollMs: number;
  private readonly concurrency: number;
  private readonly perUser: number;
  private readonly resolver: HostResolver;
  private readonly sends = new Set<Promise<void>>();
  /** Sends in flight per webhook owner. */
  private readonly owners = new Map<string, number>();

  constructor(private readonly options: DispatcherOptions) {
    this.pollMs = options.pollMs ?? 5000;
    this.concurrency = options.concurrency ?? 8;
    this.perUser = options.perUser ?? SENDS_PER_USER;
    this.resolver = options.resolver ?? new HostResolver();
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
    await Promise.allSettled([...this.sends]);
  }

  private async run(): Promise<void> {
    while (!this.stopped) {
      let waitMs = this.pollMs;
      try {
        await this.fill();
        await this.sweep();
        const next = await this.options.store.nextDue(this.options.now());
        if (next !== undefined) {
          const untilDue = Math.max(0, next.getTime() - this.options.now().getTime());
          // Due and not taken: every slot is busy, or its owner's are. A send that ends wakes the loop.
          waitMs = untilDue === 0 && this.sends.size > 0 ? this.pollMs : Math.min(this.pollMs, untilDue);
        }
      } catch (error) {
        this.options.log.warn({ err: error }, 'webhook deliveries could not be read; trying again');
      }
      if (!this.stopped) await this.sleep(waitMs);
    }
  }

  /** Takes due deliveries into free slots, one claim at a time, passing over owners whose share is in flight. */
  private async fill(): Promise<void> {
    while (!this.stopped && this.sends.size < this.concurrency) {
      const now = this.options.now();
      const busy = [...this.owners].filter(([, count]) => count >= this.perUser).map(([owner]) => owner);
      // Several timeouts long: a claim must not run out while its send is still going on.
      const claimed = await this.options.store.claimDue(now, new Date(now.getTime() + 6 * SEND_TIMEOUT_MS), 1, busy);
      if (claimed.length === 0) return;
      // Every claimed row is sent: PostgreSQL may run a LIMIT ... SKIP LOCKED subquery more than
      // once in an UPDATE, so a claim can hold more rows than it asked for.
      for (const delivery of claimed) this.launch(delivery);
    }
  }

  private launch(delivery: ClaimedDelivery): void {
    const owner = delivery.userId;
    this.owners.set(owner, (this.owners.get(owner) ?? 0) + 1);
    const send: Promise<void> = this.attempt(delivery)
      .catch((error: unknown) => this.options.log.warn({ err: error, delivery_id: delivery.id }, 'webhook delivery attempt failed'))
      .finally(() => {
        this.sends.delete(send);
        const left = (this.owners.get(owner) ?? 1) - 1;
        if (left > 0) this.owners.set(owner, left);
        else this.owners.delete(owner);
        this.wake.notify();
      });
    this.sends.add(send);
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
      return await sendDelivery(delivery, { allowPrivate: this.options.allowPrivate, userAgent: this.options.userAgent, resolver: this.resolver });
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
