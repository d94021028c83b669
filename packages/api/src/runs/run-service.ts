import { randomUUID } from 'node:crypto';
import { RunEndEvent, type AgentEvent, type DoneEvent, type PermissionMode, type RunUsage, type TurnDoneEvent } from '@mada/protocol';
import {
  ACTIVE_RUN_STATUSES,
  QueuedRunLimitReached,
  RunConversationActiveError,
  RunConversationGoneError,
  type CreatedRun,
  type RunHead,
  type RunRecord,
  type RunRepository,
  type RunTextColumn,
  type RunView,
  type RunStatus,
} from '../db/run-repository.js';
import type { AppendResult } from '../db/repository.js';
import { SYSTEM_ACTOR } from '../db/audit-repository.js';
import type { RunContext, WorkspaceSource } from '../agents/run-context.js';
import { emptyUsage } from '../agents/run-usage.js';
import { ConversationNotFoundError } from '../conversations/service.js';
import { ConversationBusyError, type DraftUserMessage } from '../conversations/turn-service.js';
import type { PathSandbox } from '../tools/sandbox/paths.js';
import type { ApprovalGate } from '../tools/tool.js';
import { errorMessage } from '../util/error-message.js';
import { loggableError } from '../util/loggable-error.js';
import type { Log } from '../util/log.js';
import { encodeEvent } from './encode-event.js';
import type { RunEventBus } from './event-bus.js';
import { IdempotencyMismatchError, RunAlreadyEndedError, RunForbiddenError, RunNotFoundError, ShuttingDownError, TooManyQueuedRunsError } from './errors.js';
import { IDEMPOTENCY_WINDOW_MS } from './idempotency.js';
import type { Admission, RunQueue } from './run-queue.js';
import { EventWriter } from './event-writer.js';
import { QuotaGate, QuotaReachedAtStart, TokenQuotaSignal, UserDisabledAtStart, type RunQuota, type RunQuotas } from './quota-gate.js';
import { followRunEvents, seenRun, type FollowOptions } from './follow-events.js';

/** Where runs are counted; every run is counted here, where it starts and ends, and nowhere else. */
export interface RunMetrics {
  runStarted(agent: string): void;
  /** `executed` false: the run ended before the queue let it start, and `seconds` is its wait. */
  runEnded(agent: string, status: EndStatus, seconds: number, executed: boolean): void;
}

/** Snapshots of a run's working directory (checkpoints/); RunService only calls its hooks. */
export interface RunCheckpoints {
  forRun(runId: string, workingDir: string): { beforeModify(): Promise<void>; finish(): Promise<void> };
}

export interface JobResult {
  response: string;
  /** The run's last event: `done`, with what the turn stored when the run is a conversation turn. */
  done: DoneEvent | TurnDoneEvent;
}

/** The run's approval gate, made once the run can emit events (approval-service.ts). */
export type GateFactory = (emit: (frame: AgentEvent) => void) => ApprovalGate;

/** What a run does once it may execute: the agent, or a conversation turn around it. */
export interface RunJob {
  /** Who answers the approval rules' asks during the run; absent: nobody. */
  gate?: GateFactory;
  execute(context: RunContext): Promise<JobResult>;
}

export type EndStatus = 'succeeded' | 'failed' | 'cancelled' | 'interrupted';

export interface RunRequest {
  userId: string;
  agentType: string;
  mode: PermissionMode;
  prompt: string;
  workingDir: string;
  /** The configured model the run is sent to (checked by the caller). */
  model: string;
  conversationId?: string | null;
  /** The Idempotency-Key header and a digest of the request it came with. */
  idempotency?: { key: string; hash: string } | undefined;
  /** A conversation turn's user message: stored with the run, in one transaction. */
  userMessage?: DraftUserMessage;
  /** The user's workspace when the caller resolved it already (to check `workingDir`); else resolved here. */
  workspace?: PathSandbox;
}

export interface RunServiceOptions {
  store: RunRepository;
  bus: RunEventBus;
  queue: RunQueue;
  /** Each user's workspace: a run acts in its owner's, as it was when the run was created. */
  workspaces: WorkspaceSource;
  /** How long a run's lease lasts without renewal: after it, any replica declares the run interrupted. */
  leaseMs: number;
  /** The quotas that apply to a user's next run (TEAMS.md section 9), enforced by quota-gate.ts. */
  quotasOf(userId: string): Promise<RunQuotas>;
  /** Whether a user is disabled now: a queued run of theirs does not start (quota-gate.ts). */
  isDisabled?(userId: string): Promise<boolean>;
  /** Runs of one user queued at once, over every replica (MAX_QUEUED_RUNS_PER_USER); more get 429. */
  maxQueuedPerUser?: number;
  /** Ended runs older than this are deleted by the sweep; 0 keeps them. */
  retentionHours: number;
  now?: () => Date;
  /**
   * The text a failed run stores and shows (its `error`, its last `error` event). Defaults to the
   * error's message; the service hides internal addresses from keyed users and SQL from everyone.
   */
  describeFailure?: (error: unknown) => string;
  /** Takes each run's snapshots; the end one before the run's end is recorded. */
  checkpoints?: RunCheckpoints;
  /** Counts runs as they start executing and as they end (metrics/service-metrics.ts). */
  metrics?: RunMetrics;
  log: Log;
}

export const RUN_CANCELLED = 'Run cancelled';
export const RUN_INTERRUPTED = 'Run interrupted: the service stopped';

interface Execution {
  controller: AbortController;
  finished: Promise<RunRecord>;
  conversationId: string | null;
}

/**
 * Stored runs: every agent run, whichever route starts it, is recorded with its events, executes
 * when the queue admits it, can be cancelled from any request (or replica), and outlives the HTTP
 * connection that started it. Events are stored before anyone is told of them.
 */
export class RunService {
  private readonly executions = new Map<string, Execution>();
  /** This process's name on the leases of the runs it executes. */
  private readonly owner = randomUUID();
  private readonly now: () => Date;
  private readonly leaseTimer: NodeJS.Timeout;
  private renewing: Promise<void> = Promise.resolve();
  private draining = false;
  private readonly quotas: QuotaGate;

  constructor(private readonly options: RunServiceOptions) {
    this.now = options.now ?? (() => new Date());
    this.quotas = new QuotaGate({ store: options.store, bus: options.bus, queue: options.queue, quotasOf: options.quotasOf, ...(options.isDisabled ? { isDisabled: options.isDisabled } : {}), now: this.now });
    this.leaseTimer = setInterval(() => {
      this.renewing = this.renewing.then(() => this.keepLeases());
    }, Math.max(50, Math.floor(options.leaseMs / 3)));
    this.leaseTimer.unref();
  }

  /** Where `userId`'s runs may act (their working directory is checked against it before they are stored). */
  workspaceOf(userId: string): Promise<PathSandbox> {
    return this.options.workspaces.of(userId);
  }

  /** Runs queued or executing in this process. */
  get active(): number {
    return this.executions.size;
  }

  get queued(): number {
    return this.options.queue.queued;
  }

  /**
   * Records the run as queued and starts it in the background (tracked: close() waits for it).
   * A request repeating an Idempotency-Key of the last 24 h gets the first run back instead
   * (`created` false), and `job` is never called for it.
   */
  async start(request: RunRequest, job: (run: RunRecord, turn: AppendResult | undefined) => RunJob): Promise<{ run: RunRecord; created: boolean }> {
    if (this.draining) throw new ShuttingDownError();
    const workspace = request.workspace ?? (await this.workspaceOf(request.userId));
    const now = this.now();
    const idempotentSince = new Date(now.getTime() - IDEMPOTENCY_WINDOW_MS);
    const earlier = await this.repeated(request.userId, request.idempotency);
    if (earlier) return { run: earlier, created: false };
    const controller = new AbortController();
    const quota = await this.quotas.forRun(request.userId, now);
    // Asked before the run is stored: a run with a free place is stored running, which spares the
    // status change that starting it would otherwise cost every run.
    const admission = this.options.queue.admit(request.userId, controller.signal, quota.maxConcurrentRuns);
    let stored: CreatedRun;
    try {
      stored = await this.options.store.createRun(
        {
          id: randomUUID(),
          userId: request.userId,
          agentType: request.agentType,
          mode: request.mode,
          prompt: request.prompt,
          workingDir: request.workingDir,
          model: request.model,
          conversationId: request.conversationId ?? null,
          status: admission.queued ? 'queued' : 'running',
          startedAt: admission.queued ? null : now,
          now,
          idempotencyKey: request.idempotency?.key ?? null,
          requestHash: request.idempotency?.hash ?? null,
          leaseOwner: this.owner,
          leaseUntil: new Date(now.getTime() + this.options.leaseMs),
        },
        {
          idempotentSince,
          quota: quota.check,
          ...(this.options.maxQueuedPerUser === undefined ? {} : { maxQueued: this.options.maxQueuedPerUser }),
          ...(request.userMessage ? { userMessage: request.userMessage } : {}),
        },
      );
    } catch (error) {
      giveBack(admission, controller);
      const refused = await this.refusal(error, request);
      if (refused instanceof RepeatedRun) return { run: refused.run, created: false };
      throw refused;
    }
    const { run, created, turn } = stored;
    if (!created) {
      giveBack(admission, controller);
      // A concurrent request with the same key stored its run first.
      return { run: this.sameRequest(run, request.idempotency), created: false };
    }
    // execute() settles only after its first await, so the entry exists before it removes it.
    const finished = this.execute(run, workspace, job(run, turn), controller, admission, quota);
    this.executions.set(run.id, { controller, finished, conversationId: run.conversationId });
    return { run, created: true };
  }

  /** The run as stored, its large texts left out (`textSlices` reads them); 404 unknown, 403 another user's. */
  async get(id: string, userId: string): Promise<RunView> {
    const run = await this.anyUsers(id);
    if (run.userId !== userId) throw new RunForbiddenError();
    return run;
  }

  /** The run as `get` reads it, whoever owns it (an admin's cancel); 404 unknown. */
  private async anyUsers(id: string): Promise<RunView> {
    // PostgreSQL refuses to compare a uuid column with text that is not one.
    if (!UUID.test(id)) throw new RunNotFoundError();
    const run = await this.options.store.viewRun(id.toLowerCase());
    if (!run) throw new RunNotFoundError();
    return run;
  }

  /**
   * Follows a run's events after seq `after` until its final frame, or until `signal` aborts:
   * stored ones first, then each new one once it is stored. `deliver` is awaited before the next
   * frames are read (backpressure). `run` is the run as the caller read it (its ownership check).
   */
  follow(run: RunHead, options: { after: number; withIds: boolean; signal: AbortSignal; deliver: FollowOptions['deliver'] }): Promise<void> {
    return followRunEvents({ store: this.options.store, bus: this.options.bus, runId: run.id, seen: seenRun(run), ...options });
  }

  /** Bytes (UTF-8) of a run's events stored after seq `seq`: how far behind a follower there is. */
  storedAfter(runId: string, seq: number): Promise<number> {
    return this.options.store.eventTextAfter(runId, seq);
  }

  /** An ended run's last event (its `done` or `error`); undefined when it has none. */
  async lastEvent(run: RunRecord): Promise<RunEndEvent | undefined> {
    const [last] = await this.options.store.eventsAfter(run.id, run.lastEventId - 1, 1);
    // Stored by this service: small, and JSON it wrote itself.
    const parsed = last === undefined ? undefined : RunEndEvent.safeParse(JSON.parse(last.data));
    return parsed?.success ? parsed.data : undefined;
  }

  /** The user's runs, newest first; large texts left out as in `get`. */
  list(userId: string, page: { limit: number; offset: number; status?: RunStatus }): Promise<{ items: RunView[]; total: number }> {
    return this.options.store.listRuns(userId, { limit: page.limit, offset: page.offset, status: page.status ?? null });
  }

  /** A text `get` or `list` left out, a slice at a time, read off the event loop. */
  textSlices(runId: string, column: RunTextColumn): AsyncIterable<string> {
    return this.options.store.runTextSlices(runId, column);
  }

  /** Waits for a run executing in this process to end (the blocking legacy routes). */
  async finished(id: string): Promise<RunRecord> {
    const execution = this.executions.get(id);
    if (execution) return execution.finished;
    const run = await this.options.store.findRun(id);
    if (!run) throw new RunNotFoundError();
    return run;
  }

  /**
   * Stops a run. One executing here is aborted at once (model call, tools). One executing on
   * another replica is ended in the database; that replica notices at its next lease renewal and
   * aborts its own work.
   */
  async cancel(id: string, userId: string, anyUser = false, actor = userId): Promise<RunRecord> {
    const run = anyUser ? await this.anyUsers(id) : await this.get(id, userId);
    if (!isActive(run.status)) throw new RunAlreadyEndedError();
    const execution = this.executions.get(run.id);
    if (execution) {
      execution.controller.abort(new CancelSignal(actor));
      return execution.finished;
    }
    const ended = await this.end(run.id, cancelledEnd({ actor, owner: run.userId }), emptyUsage());
    if (!ended) throw new RunAlreadyEndedError();
    return ended;
  }

  /** Cancels every unfinished run of a user (disabled), here or on another replica. */
  async cancelUserRuns(userId: string): Promise<void> {
    for (const status of ['queued', 'running', 'waiting_approval'] as const) {
      // Bounded: a run that cannot be cancelled (its store failing) must not keep this going.
      for (let round = 0; round < 100; round++) {
        const { items } = await this.options.store.listRuns(userId, { limit: 100, offset: 0, status });
        if (items.length === 0) break;
        // Ended meanwhile is as good as cancelled.
        // The service cancels them: the user.updated entry just before names the admin who disabled the user.
        await Promise.allSettled(items.map((run) => this.cancel(run.id, userId, true, SYSTEM_ACTOR)));
        if (items.length < 100) break;
      }
    }
  }

  /** Cancels a run because its client went away (legacy routes); nothing to answer. */
  abandon(id: string): void {
    this.executions.get(id)?.controller.abort(new Error(RUN_CANCELLED));
  }

  /** Cancels the turn running here on a conversation that is being deleted, and waits for it to stop. */
  async cancelConversationRuns(conversationId: string): Promise<void> {
    const running = [...this.executions.entries()].filter(([, e]) => e.conversationId === conversationId);
    for (const [id] of running) this.abandon(id);
    await Promise.allSettled(running.map(([, e]) => e.finished));
  }

  /**
   * Ends `interrupted` every unfinished run whose process is gone: at start-up of a single process
   * all of them (`expiredBefore` in the future), with replicas those whose lease ran out. Its
   * conversation, if it was a turn, may take the next turn from then on.
   */
  async recoverInterrupted(scope: 'all' | 'expired'): Promise<number> {
    const now = this.now();
    const expiredBefore = scope === 'all' ? new Date(now.getTime() + 365 * 86_400_000) : now;
    const ids = await this.options.store.interruptAbandonedRuns(expiredBefore, now, {
      error: RUN_INTERRUPTED,
      eventData: encodeEvent(interruptedEnd().final),
    });
    await Promise.all(ids.map((id) => this.options.bus.publish(id)));
    return ids.length;
  }

  /** Deletes ended runs past RUN_RETENTION_HOURS with their events. */
  async sweepRetention(): Promise<number> {
    if (this.options.retentionHours <= 0) return 0;
    const cutoff = new Date(this.now().getTime() - this.options.retentionHours * 3_600_000);
    return this.options.store.deleteRunsEndedBefore(cutoff);
  }

  /** Refuses new runs from here on (shutdown): 503 `Service is shutting down`. */
  drain(): void {
    this.draining = true;
  }

  get isDraining(): boolean {
    return this.draining;
  }

  /** Waits for this process's runs to finish on their own, up to `ms`. */
  async settle(ms: number): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const waited = new Promise<void>((resolve) => (timer = setTimeout(resolve, ms)));
    await Promise.race([Promise.allSettled([...this.executions.values()].map((e) => e.finished)), waited]);
    clearTimeout(timer);
  }

  /** Ends every run of this process as interrupted and waits for them to unwind; stops the lease timer. */
  async close(): Promise<void> {
    this.drain();
    for (const execution of this.executions.values()) execution.controller.abort(new InterruptSignal());
    await Promise.allSettled([...this.executions.values()].map((e) => e.finished));
    clearInterval(this.leaseTimer);
    await this.renewing;
  }

  /**
   * The run an Idempotency-Key of the last 24 h already names (undefined: none, or no key); 422
   * when the key was used for another request.
   */
  async repeated(userId: string, idempotency: RunRequest['idempotency']): Promise<RunRecord | undefined> {
    if (!idempotency) return undefined;
    const since = new Date(this.now().getTime() - IDEMPOTENCY_WINDOW_MS);
    const found = await this.options.store.findRunByIdempotencyKey(userId, idempotency.key, since);
    return found ? this.sameRequest(found, idempotency) : undefined;
  }

  /**
   * Why a run was not stored, as the caller's error; for a conversation that is busy with the very
   * run a retried request started (the two raced), that run instead.
   */
  private async refusal(error: unknown, request: RunRequest): Promise<unknown> {
    if (error instanceof QueuedRunLimitReached) return new TooManyQueuedRunsError(error.max);
    const overQuota = this.quotas.refusal(error);
    if (overQuota) return overQuota;
    if (error instanceof RunConversationGoneError) return new ConversationNotFoundError();
    if (!(error instanceof RunConversationActiveError)) return error;
    const raced = await this.repeated(request.userId, request.idempotency);
    return raced ? new RepeatedRun(raced) : new ConversationBusyError();
  }

  /** The run a key already names, if the request is the same; 422 when the key is reused for another. */
  private sameRequest(run: RunRecord, idempotency: RunRequest['idempotency']): RunRecord {
    if (run.requestHash !== idempotency?.hash) throw new IdempotencyMismatchError();
    return run;
  }

  /** Renews this process's leases; a run ended elsewhere meanwhile (cancelled on another replica) is aborted here. */
  private async keepLeases(): Promise<void> {
    if (this.executions.size === 0) return;
    try {
      await this.options.store.renewLeases(this.owner, new Date(this.now().getTime() + this.options.leaseMs));
      for (const [id, execution] of this.executions) {
        const run = await this.options.store.findRun(id);
        if (run && !isActive(run.status)) execution.controller.abort(new Error(RUN_CANCELLED));
      }
    } catch (error) {
      this.options.log.warn({ err: error }, 'run lease renewal failed');
    }
  }

  private async execute(run: RunRecord, workspace: PathSandbox, job: RunJob, controller: AbortController, admission: Admission, quota: RunQuota): Promise<RunRecord> {
    try {
      return await this.executeTracked(run, workspace, job, controller, admission, quota);
    } finally {
      this.executions.delete(run.id);
    }
  }

  private async executeTracked(run: RunRecord, workspace: PathSandbox, job: RunJob, controller: AbortController, admission: Admission, quota: RunQuota): Promise<RunRecord> {
    const signal = controller.signal;
    const log = this.options.log.child({ run_id: run.id });
    const events = new EventWriter(run.id, this.options, this.now, log);
    let end: Ending;
    const usage = emptyUsage();
    let slot: { release(): void } | undefined;
    const checkpoint = this.options.checkpoints?.forRun(run.id, run.workingDir);
    let admitted = false;
    let startedAt = 0;
    try {
      // Stored queued without waiting here: the user's other replicas hold every place of theirs.
      if (admission.queued || run.status === 'queued') events.emit({ event: 'thinking', message: queuedMessage(admission.ahead) });
      const placed = await this.quotas.place(run, admission, quota, signal);
      slot = placed.slot;
      admitted = true;
      startedAt = performance.now();
      this.options.metrics?.runStarted(run.agentType);
      const afterModelCall = this.quotas.tokenCheck(run, placed.quotas, usage, (reason) => controller.abort(reason));
      log.debug({ agent: run.agentType }, 'run started');
      const emit = (frame: AgentEvent): void => events.emit(frame);
      const result = await job.execute({
        owner: run.userId,
        workspace,
        signal,
        emit,
        usage,
        log,
        ...(job.gate ? { approvalGate: job.gate(emit) } : {}),
        ...(checkpoint ? { beforeModify: () => checkpoint.beforeModify() } : {}),
        ...(afterModelCall ? { afterModelCall } : {}),
      });
      end = { status: 'succeeded', response: result.response, error: null, final: result.done };
    } catch (error) {
      end = signal.aborted ? abortedEnd(signal, run.userId) : this.notStarted(error, run.userId) ?? this.failure(run.id, error);
    } finally {
      slot?.release();
    }
    const seconds = admitted ? (performance.now() - startedAt) / 1000 : (this.now().getTime() - run.createdAt.getTime()) / 1000;
    this.options.metrics?.runEnded(run.agentType, end.status, seconds, admitted);
    // Never throws: a failed snapshot is recorded with the checkpoint, not with the run.
    await checkpoint?.finish();
    await events.flushed();
    const ended = await this.end(run.id, end, { ...usage, tool_calls: Math.max(usage.tool_calls, events.toolCalls) }, log);
    log.info({ agent: run.agentType, status: end.status, ...(end.error === null ? {} : { error: end.error }) }, 'run ended');
    return ended ?? (await this.options.store.findRun(run.id).catch(() => undefined)) ?? run;
  }

  /**
   * How a queued run ends that may not start after all (quota-gate.ts): `failed` with the 429's
   * text over a daily quota, `cancelled` by the service for a disabled user, as their running runs
   * were. Its events so far (the queued notice) are kept, as every run's are.
   */
  private notStarted(error: unknown, owner: string): Ending | undefined {
    if (error instanceof QuotaReachedAtStart) return failedEnd(error.message);
    if (error instanceof UserDisabledAtStart) return cancelledEnd({ actor: SYSTEM_ACTOR, owner });
    return undefined;
  }

  private failure(runId: string, error: unknown): Ending {
    this.options.log.warn({ err: loggableError(error), run_id: runId }, 'run failed');
    return failedEnd((this.options.describeFailure ?? errorMessage)(error));
  }

  /**
   * Records the end, the usage and the final event in one step, once: undefined when the run had
   * already ended (cancelled or interrupted elsewhere), and then nothing more is stored.
   */
  private async end(runId: string, end: Ending, usage: RunUsage, log: Log = this.options.log.child({ run_id: runId })): Promise<RunRecord | undefined> {
    try {
      const { final, cancelled, ...outcome } = end;
      const now = this.now();
      const audit = cancelled && { at: now, actor: cancelled.actor, action: 'run.cancelled' as const, target: `run:${runId}`, detail: { user: cancelled.owner } };
      const stored = await this.options.store.endRun(runId, encodeEvent(final), now, outcome, usage, audit);
      if (stored) await this.options.bus.publish(runId, stored.event);
      // Its place is free: the user's runs queued on any replica may start.
      if (stored) await this.quotas.ended(stored.run.userId);
      return stored?.run;
    } catch (error) {
      log.error({ err: error }, 'could not record the end of a run');
      return undefined;
    }
  }
}

/** Not an error: the run a retried request started, found where a new run was refused. */
class RepeatedRun {
  constructor(readonly run: RunRecord) {}
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The place a run asked for before it was stored, when it will not run after all. */
function giveBack(admission: Admission, controller: AbortController): void {
  // A waiting run leaves the queue; a place already given is released.
  controller.abort();
  admission.slot.then((slot) => slot.release(), () => undefined);
}

const isActive = (status: RunStatus): boolean => ACTIVE_RUN_STATUSES.includes(status);

/** The abort reason of a shutdown: the run ends `interrupted`, not `cancelled`. */
export class InterruptSignal extends Error {
  constructor() {
    super(RUN_INTERRUPTED);
  }
}

/** The abort reason of a cancel request: who asked, for the audit log. */
class CancelSignal extends Error {
  constructor(readonly actor: string) {
    super(RUN_CANCELLED);
  }
}

/** Counts only the user's own runs ahead: how busy the service is with other users' is theirs. */
const queuedMessage = (ahead: number): string =>
  `Queued: ${ahead === 0 ? 'none of your runs' : ahead === 1 ? '1 of your runs' : `${ahead} of your runs`} ahead of this one, waiting for a free place`;

interface Ending {
  status: EndStatus;
  response: string | null;
  error: string | null;
  final: RunEndEvent;
  /** A cancellation: who cancelled (recorded as run.cancelled) and whose run it was. */
  cancelled?: { actor: string; owner: string };
}

const errorEnd = (status: EndStatus, message: string): Ending => ({ status, response: null, error: message, final: { event: 'error', error_message: message } });
const failedEnd = (message: string): Ending => errorEnd('failed', message);
const cancelledEnd = (cancelled: { actor: string; owner: string }): Ending => ({ ...errorEnd('cancelled', RUN_CANCELLED), cancelled });
const interruptedEnd = (): Ending => errorEnd('interrupted', RUN_INTERRUPTED);
/** A run aborted by a shutdown is interrupted; otherwise cancelled, by whoever asked (its owner when its client went away). */
function abortedEnd(signal: AbortSignal, owner: string): Ending {
  const reason: unknown = signal.reason;
  if (reason instanceof InterruptSignal) return interruptedEnd();
  // The run used its user's daily tokens up: it ends as a failure of the run, not a cancel.
  if (reason instanceof TokenQuotaSignal) return failedEnd(reason.message);
  return cancelledEnd({ actor: reason instanceof CancelSignal ? reason.actor : owner, owner });
}
