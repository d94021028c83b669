import type { NewAuditEntry } from './audit-repository.js';
import type { RunStatus, RunUsage } from '@mada/protocol';
import type { AppendResult, NewMessage } from './repository.js';

/** Stored agent runs and their event logs (EXTENSIONS.md section 2), for both dialects. */

export type { RunStatus, RunUsage };
/** Statuses of a run that has not ended: it holds a lease and may still produce events. */
export const ACTIVE_RUN_STATUSES: readonly RunStatus[] = ['queued', 'running', 'waiting_approval'];

export interface RunRecord {
  id: string;
  userId: string;
  agentType: string;
  mode: string;
  status: RunStatus;
  prompt: string;
  workingDir: string;
  /** The configured model the run was sent to; null for runs from before models were chosen. */
  model: string | null;
  conversationId: string | null;
  response: string | null;
  error: string | null;
  createdAt: Date;
  startedAt: Date | null;
  endedAt: Date | null;
  /** The run's RunUsage, as the table's columns hold it (run-response.ts gives it back as one). */
  modelCalls: number;
  toolCalls: number;
  inputTokens: number;
  outputTokens: number;
  /** Seq of the latest stored event (0: none yet). */
  lastEventId: number;
  idempotencyKey: string | null;
  /** A digest of the request that carried the idempotency key, to tell a retry from a reuse. */
  requestHash: string | null;
  /** The replica executing the run; its lease must be renewed before leaseUntil. */
  leaseOwner: string | null;
  leaseUntil: Date | null;
}

export interface RunEventRecord {
  runId: string;
  /** 1, 2, 3 ... per run, without gaps. */
  seq: number;
  /** The event's JSON text, byte for byte as it is sent. */
  data: string;
  createdAt: Date;
}

/** A run's columns that may hold a large text (an old prompt, a long model answer). */
export type RunTextColumn = 'prompt' | 'response' | 'error';

/** A stored text left out of a read because it is large: its size, to be read a slice at a time. */
export interface LargeText {
  largeBytes: number;
}

/** A run without its texts: what the service needs of a run it only checks or follows. */
export type RunHead = Omit<RunRecord, RunTextColumn>;

/** A run as a client reads it: each text inline, or left out (LargeText) when it is large. */
export interface RunView extends RunHead {
  prompt: string | LargeText;
  response: string | LargeText | null;
  error: string | LargeText | null;
}

/**
 * A text read with its run's row, on the event loop, is at most this large; a larger one is read
 * by itself off the loop (`runTextSlices`). An event's data likewise (`eventSlices`).
 */
export const INLINE_TEXT_BYTES = 256 * 1024;
/** The texts read inline for one page of runs, or for one page of events, together stay within this. */
export const INLINE_PAGE_BYTES = 1024 * 1024;

/** Frames are read and written about this many characters at a time (the stored pages' size too). */
export const EVENT_PAGE_CHARS = 64 * 1024;
/**
 * A run that ends with at least this many events also gets its frames stored in pages of about
 * EVENT_PAGE_CHARS; below it, reading the events row by row costs well under a millisecond.
 */
export const PAGED_RUN_MIN_EVENTS = 1000;

/** A page of a run's events as Server-Sent Events frames, ready to write. */
export interface EventFrames {
  /** `id: <seq>` (when asked for), `data: <event text>` and a blank line per event, in order. */
  text: string;
  /** Seq of the page's last event: the page holds every event after the requested seq up to it. */
  lastSeq: number;
  /** The page stopped short for size (INLINE_PAGE_BYTES) before events already stored. */
  cut?: boolean;
}

/** The next event to replay is large: its data is read by itself, a slice at a time (`eventSlices`). */
export interface LargeEvent {
  largeSeq: number;
}

/**
 * Stored pages of an ended run as the bytes to send: written to the socket as they come from the
 * store, with no decoding into a string and no encoding back.
 */
export interface FrameBytes {
  /** `id: <seq>`, `data: <event text>` and a blank line per event, in order, UTF-8. */
  bytes: Buffer;
  /** Seq of the page's last event. */
  lastSeq: number;
}

export interface NewRun {
  id: string;
  userId: string;
  agentType: string;
  mode: string;
  prompt: string;
  workingDir: string;
  /** Absent: null (runs stored outside the routes, which always name it). */
  model?: string | null;
  conversationId: string | null;
  status: RunStatus;
  /** Set for a run stored already running (it had a place at once); null or absent while queued. */
  startedAt?: Date | null;
  now: Date;
  idempotencyKey: string | null;
  requestHash: string | null;
  leaseOwner: string | null;
  leaseUntil: Date | null;
}

/** Fields a run's life changes; what is left out stays as it is. */
export type RunChanges = Partial<Pick<RunRecord, 'status' | 'startedAt' | 'endedAt' | 'response' | 'error' | 'leaseOwner' | 'leaseUntil'>>;

/** How a run ended: what its end stores besides the final event, the time and the usage. */
export interface RunEnding {
  status: RunStatus;
  response: string | null;
  error: string | null;
}

export interface RunListPage {
  limit: number;
  offset: number;
  status: RunStatus | null;
}

export interface CreateRunOptions {
  /** A run with the same user and idempotency key created at or after this instant is the same request. */
  idempotentSince: Date;
  /**
   * For a run stored `queued`: how many of the user's runs may be queued at once, this one
   * included, over every process sharing the database. Past it nothing is stored and
   * QueuedRunLimitReached is thrown.
   */
  maxQueued?: number;
  /** The user's quotas, checked under the user's lock with the insert (RunQuotaCheck). */
  quota?: RunQuotaCheck;
  /**
   * A conversation turn's user message (the run's `conversationId`): stored in the same
   * transaction as the run, so there is never one without the other.
   */
  userMessage?: { message: NewMessage; titleIfUnset: string | null };
}

/**
 * What createRun checks of the user's quotas, counting over every process sharing the database
 * (0: no limit). Past a daily quota nothing is stored and DailyRunQuotaReached or
 * DailyTokenQuotaReached is thrown; a run asked for `running` while the user already has
 * `maxConcurrent` runs executing is stored `queued` instead.
 */
export interface RunQuotaCheck {
  /** Where the day began (00:00 UTC): runs created since then are today's. */
  since: Date;
  maxRunsPerDay: number;
  maxTokensPerDay: number;
  maxConcurrent: number;
}

/** The user's runs created today would be more than the quota with this one. */
export class DailyRunQuotaReached extends Error {
  constructor(readonly max: number) {
    super(`The user's daily run quota (${max}) is reached`);
    this.name = 'DailyRunQuotaReached';
  }
}

/** The user's runs created today already used the token quota up. */
export class DailyTokenQuotaReached extends Error {
  constructor(
    readonly used: number,
    readonly max: number,
  ) {
    super(`The user's daily token quota (${used} of ${max}) is reached`);
    this.name = 'DailyTokenQuotaReached';
  }
}

/** What claimQueuedRun did: the run now runs, the user has no free place, or it is no longer queued. */
export type ClaimOutcome = 'started' | 'full' | 'not_queued';

export interface CreatedRun {
  run: RunRecord;
  created: boolean;
  /** The user message stored with a new run, and the conversation after it. */
  turn?: AppendResult;
}

/** createRun's refusal of a queued run past CreateRunOptions.maxQueued. */
export class QueuedRunLimitReached extends Error {
  constructor(readonly max: number) {
    super(`The user already has ${max} queued runs`);
    this.name = 'QueuedRunLimitReached';
  }
}

/** The run's conversation is gone (deleted since it was read): nothing was stored. */
export class RunConversationGoneError extends Error {
  constructor() {
    super('The conversation of the run is gone');
    this.name = 'RunConversationGoneError';
  }
}

/** The run's conversation already has an active run (one turn at a time): nothing was stored. */
export class RunConversationActiveError extends Error {
  constructor() {
    super('The conversation has an active run');
    this.name = 'RunConversationActiveError';
  }
}

export interface RunRepository {
  /**
   * Stores a new run, unless one of this user's runs created since `idempotentSince` carries the
   * same idempotency key: then that run comes back with created false and nothing is stored.
   * Safe under concurrency: of simultaneous requests with one key, exactly one creates.
   * An older run's key is released, so a key may be reused after the window. A conversation has
   * one active run at most: a second throws RunConversationActiveError. A run created records
   * `run.created` in the audit log in the same transaction (its prompt stays out of it).
   */
  createRun(input: NewRun, options: CreateRunOptions): Promise<CreatedRun>;
  findRun(id: string): Promise<RunRecord | undefined>;
  /**
   * Starts a queued run (status `running`, started_at `now`) if its user has fewer than
   * `maxConcurrent` runs executing (`running` or `waiting_approval`) over every process; 0: no
   * limit. Under the same per-user lock as createRun, so two replicas cannot both take the last place.
   */
  claimQueuedRun(id: string, userId: string, maxConcurrent: number, now: Date): Promise<ClaimOutcome>;
  /** Input and output tokens the user's runs created since `since` have recorded (ended runs' usage). */
  tokensSince(userId: string, since: Date): Promise<number>;
  /** The user's runs created since `since`, and the tokens tokensSince counts. */
  usedSince(userId: string, since: Date): Promise<{ runs: number; tokens: number }>;
  /** This user's run with this key created since `since`. */
  findRunByIdempotencyKey(userId: string, key: string, since: Date): Promise<RunRecord | undefined>;
  /** The run as a client reads it: large texts left out (INLINE_TEXT_BYTES). */
  viewRun(id: string): Promise<RunView | undefined>;
  /**
   * The user's runs, newest first, optionally of one status, with the total that matches; texts
   * inline only while the page's stay within INLINE_PAGE_BYTES, the others left out.
   */
  listRuns(userId: string, page: RunListPage): Promise<{ items: RunView[]; total: number }>;
  /** A text of a run left out of a view, a slice at a time, read off the event loop; empty when it is gone. */
  runTextSlices(runId: string, column: RunTextColumn): AsyncIterable<string>;
  /** The data of one event, a slice at a time, read off the event loop (a LargeEvent). */
  eventSlices(runId: string, seq: number): AsyncIterable<string>;
  /**
   * Applies `changes`; with `onlyIf`, only while the run's status is one of those (a cancel loses
   * to the run's own end, say). Undefined when the run is gone or the condition failed.
   */
  updateRun(id: string, changes: RunChanges, onlyIf?: readonly RunStatus[]): Promise<RunRecord | undefined>;
  /**
   * Stores the next event of an active run (seq = last_event_id + 1), the event every running run
   * stores; concurrent appends get distinct, gapless seqs. The event stored, or undefined (nothing
   * stored) when the run is gone or no longer active.
   */
  appendActiveEvent(id: string, data: string, now: Date): Promise<RunEventRecord | undefined>;
  /**
   * Ends an active run in one statement and one transaction with its final event: the status and
   * outcome, ended_at `now`, the lease released and `usage` added to the counters; a run of
   * PAGED_RUN_MIN_EVENTS events or more gets its frames stored in pages too (`eventPagesAfter`). Undefined when the run had already ended or is gone: then nothing changes.
   * `audit` (a cancellation) is appended to the audit log in the same transaction, only when the run ends here,
   * as are the deliveries of the owner's webhooks subscribed to `run_ended`.
   */
  endRun(id: string, data: string, now: Date, ending: RunEnding, usage: RunUsage, audit?: NewAuditEntry): Promise<{ run: RunRecord; event: RunEventRecord } | undefined>;
  /**
   * How many bytes (UTF-8) the events after `afterSeq` hold: what a follower at that point has yet
   * to send. Sizes only: no event's data is read.
   */
  eventTextAfter(id: string, afterSeq: number): Promise<number>;
  /** Events with seq > afterSeq, in order, at most `limit`: replay a page at a time. */
  eventsAfter(id: string, afterSeq: number, limit: number): Promise<RunEventRecord[]>;
  /**
   * Events with seq > afterSeq, at most `limit`, rendered as SSE frames in one string (`withIds`:
   * with their `id:` lines); fewer when they are large (INLINE_PAGE_BYTES); a LargeEvent when the
   * next one is over INLINE_TEXT_BYTES; undefined when there are none.
   */
  eventFramesAfter(id: string, afterSeq: number, limit: number, withIds: boolean): Promise<EventFrames | LargeEvent | undefined>;
  /**
   * For an ended run with stored pages: up to `limit` pages of frames (with `id:` lines), the first
   * one starting at seq afterSeq + 1; none when the run has no pages or none past afterSeq. Pages
   * stop before one over INLINE_PAGE_BYTES (it holds a large event): the events from there are read row by row.
   */
  eventPagesAfter(id: string, afterSeq: number, limit: number): Promise<FrameBytes[]>;
  /** Extends the leases of every active run this replica owns. */
  renewLeases(owner: string, until: Date): Promise<void>;
  /**
   * Ends as `interrupted` every active run whose lease ran out before `expiredBefore` (or that has
   * none), with a last event `eventData` and error `error`, and frees the conversation turn the run
   * held (a conversation run holds its turn with its own id as the token), and denies the run's
   * pending approvals with `error` as their message, each with its owner's `run_ended` webhook
   * deliveries, all in one transaction. Returns their ids.
   */
  interruptAbandonedRuns(expiredBefore: Date, now: Date, ending: { error: string; eventData: string }): Promise<string[]>;
  /** Deletes ended runs (and their events) that ended before `cutoff`; returns how many. */
  deleteRunsEndedBefore(cutoff: Date): Promise<number>;
}
