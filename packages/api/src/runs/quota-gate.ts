import type { RunUsage } from '@mada/protocol';
import { DailyRunQuotaReached, DailyTokenQuotaReached, type RunQuotaCheck, type RunRecord, type RunRepository } from '../db/run-repository.js';
import { TooManyRequestsError } from '../errors.js';
import { DAY_MS, startOfUtcDay } from '../util/utc-day.js';
import type { RunEventBus } from './event-bus.js';
import type { Admission, RunQueue, RunSlot } from './run-queue.js';

/** A user's quotas as they apply to a run (TEAMS.md section 9); 0 means no limit. */
export interface RunQuotas {
  maxConcurrentRuns: number;
  maxRunsPerDay: number;
  maxTokensPerDay: number;
}

/** The quotas read for one run when it is submitted, and the day they count from. */
export interface RunQuota extends RunQuotas {
  check: RunQuotaCheck;
}


/** Seconds until the next UTC day, when a daily quota lets the user in again. */
const untilTomorrow = (now: Date): number => Math.max(1, Math.ceil((startOfUtcDay(now).getTime() + DAY_MS - now.getTime()) / 1000));

export const tokenQuotaText = (used: number, max: number): string => `Daily token quota reached (${used} of ${max})`;
const runQuotaText = (max: number): string => `Daily run quota reached (${max})`;

export class DailyRunQuotaError extends TooManyRequestsError {
  constructor(max: number, retryAfterSeconds: number) {
    super(runQuotaText(max), retryAfterSeconds);
  }
}

export class DailyTokenQuotaError extends TooManyRequestsError {
  constructor(used: number, max: number, retryAfterSeconds: number) {
    super(tokenQuotaText(used, max), retryAfterSeconds);
  }
}

/** The abort reason of a run whose model call used the day's tokens up: it ends `failed` with this text. */
export class TokenQuotaSignal extends Error {
  constructor(used: number, max: number) {
    super(tokenQuotaText(used, max));
    this.name = 'TokenQuotaSignal';
  }
}

/**
 * A queued run that may not start after all: a daily quota was reached while it waited. It ends
 * `failed` with the text its submission would have got as a 429 now.
 */
export class QuotaReachedAtStart extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'QuotaReachedAtStart';
  }
}

/**
 * A run whose user was disabled before it started (while it waited, or as it was stored): it ends
 * `cancelled`, as their running ones did.
 */
export class UserDisabledAtStart extends Error {
  constructor() {
    super('The run\'s user was disabled before it started');
    this.name = 'UserDisabledAtStart';
  }
}

export interface QuotaGateOptions {
  store: RunRepository;
  bus: RunEventBus;
  queue: RunQueue;
  /** The quotas that apply to the user now: their own, else the service's defaults. */
  quotasOf(userId: string): Promise<RunQuotas>;
  /** Whether the user is disabled now (asked before a queued run starts); absent: never. */
  isDisabled?(userId: string): Promise<boolean>;
  now(): Date;
}

/**
 * Enforces each user's quotas on their runs, over every replica sharing the database: the daily
 * run and token quotas when a run is stored (the repository counts and inserts under a per-user
 * lock), the token quota again after each model call, and `max_concurrent_runs` when a run starts.
 */
export class QuotaGate {
  constructor(private readonly options: QuotaGateOptions) {}

  /** The user's quotas for a run being submitted now, and what createRun checks with them. */
  async forRun(userId: string, now: Date): Promise<RunQuota> {
    const quotas = await this.options.quotasOf(userId);
    return { ...quotas, check: { since: startOfUtcDay(now), maxRunsPerDay: quotas.maxRunsPerDay, maxTokensPerDay: quotas.maxTokensPerDay, maxConcurrent: quotas.maxConcurrentRuns } };
  }

  /** The caller's error for a creation refused over a daily quota; undefined for any other error. */
  refusal(error: unknown): Error | undefined {
    const now = this.options.now();
    if (error instanceof DailyRunQuotaReached) return new DailyRunQuotaError(error.max, untilTomorrow(now));
    if (error instanceof DailyTokenQuotaReached) return new DailyTokenQuotaError(error.used, error.max, untilTomorrow(now));
    return undefined;
  }

  /**
   * Waits for the run's place: one in this process (the queue), and one among the user's
   * executing runs on every replica. A run stored `running` took the latter with its insert; a
   * queued one takes it here, and when the user's runs on other replicas hold every place, gives
   * this process's place back and waits for one of them to end. Rejects when `signal` aborts.
   *
   * A queued run is checked again before each claim, with the user's quotas as they are then: it
   * may have waited while its user was disabled (UserDisabledAtStart), an admin lowered a quota,
   * or the user's runs that ended meanwhile used the day's tokens up (QuotaReachedAtStart). Resolves
   * with the quotas the run starts under: its token quota is checked with them after each model call.
   *
   * A run stored `running` is checked once, after it was stored, for its user being disabled: the
   * request that made it was let in by a key lookup up to a key cache's lifetime old (on another
   * replica, from before the disable), and disabling cancels only the runs stored by then. One of
   * the two sees it.
   */
  async place(run: RunRecord, admission: Admission, quota: RunQuotas, signal: AbortSignal): Promise<{ slot: RunSlot; quotas: RunQuotas }> {
    let slot = await admission.slot;
    if (run.status === 'running') {
      const disabled = await this.isDisabled(run.userId).catch((error: unknown) => {
        slot.release();
        throw error;
      });
      if (disabled) {
        slot.release();
        throw new UserDisabledAtStart();
      }
      return { slot, quotas: quota };
    }
    let quotas = quota;
    for (;;) {
      // Listening before the claim: an end between a refused claim and the wait is not missed.
      const freed = this.freed(run.userId, signal);
      try {
        const claimed = await this.stillAllowed(run)
          .then(async (current) => {
            quotas = current;
            return this.options.store.claimQueuedRun(run.id, run.userId, current.maxConcurrentRuns, this.options.now());
          })
          .catch((error: unknown) => {
            slot.release();
            throw error;
          });
        // 'not_queued': the run ended meanwhile (cancelled on another replica); the lease renewal stops it.
        if (claimed !== 'full') return { slot, quotas };
        slot.release();
        await freed.promise;
      } finally {
        freed.stop();
      }
      slot = await this.options.queue.admit(run.userId, signal, quotas.maxConcurrentRuns).slot;
    }
  }

  /**
   * The user's quotas now, if the queued run may still start under them. Not atomic with the claim
   * that follows: a run ending between the two adds tokens the first model call's check then sees.
   */
  private async stillAllowed(run: RunRecord): Promise<RunQuotas> {
    if (await this.isDisabled(run.userId)) throw new UserDisabledAtStart();
    const quotas = await this.options.quotasOf(run.userId);
    if (quotas.maxRunsPerDay === 0 && quotas.maxTokensPerDay === 0) return quotas;
    const today = startOfUtcDay(this.options.now());
    const used = await this.options.store.usedSince(run.userId, today);
    // Counted among today's runs only if created today: an earlier day's run counted against that day's quota.
    if (quotas.maxRunsPerDay > 0 && run.createdAt.getTime() >= today.getTime() && used.runs > quotas.maxRunsPerDay) {
      throw new QuotaReachedAtStart(runQuotaText(quotas.maxRunsPerDay));
    }
    if (quotas.maxTokensPerDay > 0 && used.tokens >= quotas.maxTokensPerDay) throw new QuotaReachedAtStart(tokenQuotaText(used.tokens, quotas.maxTokensPerDay));
    return quotas;
  }

  private async isDisabled(userId: string): Promise<boolean> {
    return (await this.options.isDisabled?.(userId)) ?? false;
  }

  /**
   * Tells the user's runs waiting for a place, on every replica, that one of theirs ended. Never
   * throws: waiters also look on their own.
   */
  async ended(userId: string): Promise<void> {
    await this.options.bus.publish(placesKey(userId)).catch(() => undefined);
  }

  /**
   * What a run awaits after each of its model calls when its user has a token quota: the tokens of
   * the user's runs created today that ended, plus this run's own so far. Once they reach the
   * quota the run is aborted with a TokenQuotaSignal (and that is thrown): it ends `failed`.
   */
  tokenCheck(run: RunRecord, quota: RunQuotas, usage: RunUsage, abort: (reason: TokenQuotaSignal) => void): (() => Promise<void>) | undefined {
    const max = quota.maxTokensPerDay;
    if (max === 0) return undefined;
    return async () => {
      const stored = await this.options.store.tokensSince(run.userId, startOfUtcDay(this.options.now()));
      const used = stored + usage.input_tokens + usage.output_tokens;
      if (used < max) return;
      const reason = new TokenQuotaSignal(used, max);
      abort(reason);
      throw reason;
    };
  }

  /** Resolves when a run of the user ends (here or on another replica), or after the bus's poll interval. */
  private freed(userId: string, signal: AbortSignal): { promise: Promise<void>; stop(): void } {
    let stop = (): void => undefined;
    const promise = new Promise<void>((resolve, reject) => {
      const timer = setTimeout(resolve, Math.min(this.options.bus.pollMs, MAX_WAKE_MS));
      const onAbort = (): void => reject(signal.reason instanceof Error ? signal.reason : new Error('Run cancelled'));
      const unsubscribe = this.options.bus.subscribe(placesKey(userId), () => resolve());
      signal.addEventListener('abort', onAbort, { once: true });
      stop = () => {
        clearTimeout(timer);
        unsubscribe();
        signal.removeEventListener('abort', onAbort);
      };
    });
    // Settled by stop() or never awaited once the claim succeeds: no rejection may go unhandled.
    promise.catch(() => undefined);
    return { promise, stop };
  }
}

/**
 * How long a run refused a place waits at most before it asks again: an end that sent no
 * notification (a replica that died, its runs interrupted by the sweep) is noticed this late.
 */
const MAX_WAKE_MS = 2000;

/** The bus key of one user's freed places: never a run id (a UUID has no colon). */
const placesKey = (userId: string): string => `places:${userId}`;
