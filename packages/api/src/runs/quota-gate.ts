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

export class DailyRunQuotaError extends TooManyRequestsError {
  constructor(max: number, retryAfterSeconds: number) {
    super(`Daily run quota reached (${max})`, retryAfterSeconds);
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

export interface QuotaGateOptions {
  store: RunRepository;
  bus: RunEventBus;
  queue: RunQueue;
  /** The quotas that apply to the user now: their own, else the service's defaults. */
  quotasOf(userId: string): Promise<RunQuotas>;
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
   */
  async place(run: RunRecord, admission: Admission, quota: RunQuota, signal: AbortSignal): Promise<RunSlot> {
    let slot = await admission.slot;
    if (run.status === 'running') return slot;
    for (;;) {
      // Listening before the claim: an end between a refused claim and the wait is not missed.
      const freed = this.freed(run.userId, signal);
      try {
        const claimed = await this.options.store.claimQueuedRun(run.id, run.userId, quota.maxConcurrentRuns, this.options.now()).catch((error: unknown) => {
          slot.release();
          throw error;
        });
        // 'not_queued': the run ended meanwhile (cancelled on another replica); the lease renewal stops it.
        if (claimed !== 'full') return slot;
        slot.release();
        await freed.promise;
      } finally {
        freed.stop();
      }
      slot = await this.options.queue.admit(run.userId, signal, quota.maxConcurrentRuns).slot;
    }
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
  tokenCheck(run: RunRecord, quota: RunQuota, usage: RunUsage, abort: (reason: TokenQuotaSignal) => void): (() => Promise<void>) | undefined {
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
