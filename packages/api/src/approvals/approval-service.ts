import { randomUUID } from 'node:crypto';
import type { AgentEvent, ApprovalDecision, OnAsk } from '@mada/protocol';
import { CANNOT_WAIT } from '../agents/approval-check.js';
import type { ApprovalRecord, ApprovalRepository, ApprovalStatus } from '../db/approval-repository.js';
import type { RunRecord, RunRepository } from '../db/run-repository.js';
import type { RunEventBus } from '../runs/event-bus.js';
import type { GateFactory } from '../runs/agent-job.js';
import { isWithin, resolveReal } from '../tools/sandbox/paths.js';
import type { ApprovalAnswer, ApprovalAsk, ApprovalGate } from '../tools/tool.js';
import { decidedEntry, expiredEntry, ruleEntry } from './audit-entries.js';
import { Wake } from '../util/wake.js';
import { ApprovalDecidedError, ApprovalForbiddenError, ApprovalNotFoundError } from './errors.js';

export const APPROVAL_TIMED_OUT = 'Approval timed out';

export interface ApprovalServiceOptions {
  store: ApprovalRepository;
  runs: RunRepository;
  bus: RunEventBus;
  timeoutMs: number;
  /** How often a waiting run re-reads its approval, in case a wake-up from another replica was lost. */
  pollMs?: number;
  now?: () => Date;
}

/**
 * Puts an approval to the user somewhere besides the inbox as well (an MCP client's elicitation,
 * http/mcp/): called once the approval is stored and announced. `settled` aborts when the approval
 * no longer waits (answered either way, expired, or the run stopped); the relay answers through
 * `decide` like any client, and the first answer wins.
 */
export type ApprovalRelay = (approval: ApprovalRecord, settled: AbortSignal) => void;

/** The bus's topic for one user's approvals: never a run's id, which is a UUID. */
const userTopic = (userId: string): string => `approvals:${userId}`;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * Approvals that really ask (EXTENSIONS.md section 3). A waiting run holds no database connection
 * and no model call: it waits on a promise woken by the decision when it is taken in this process,
 * by the run event bus when another replica took it, and by a slow poll if both wake-ups failed.
 */
export class ApprovalService {
  /** Wakes the run waiting for an approval, when it waits in this process. */
  private readonly waiters = new Map<string, () => void>();
  private readonly now: () => Date;

  constructor(private readonly options: ApprovalServiceOptions) {
    this.now = options.now ?? (() => new Date());
  }

  /** Approvals a run of this process is waiting on now (the pending-approvals gauge sums replicas). */
  get waiting(): number {
    return this.waiters.size;
  }

  /** What a run's job makes its gate with, once it can emit events. */
  gates(run: RunRecord, onAsk: OnAsk, relay?: ApprovalRelay): GateFactory {
    return (emit) => this.gateFor(run, onAsk, emit, relay);
  }

  /** The gate a run's tool calls ask through: waits for the user (`wait`) or refuses at once (`deny`). */
  gateFor(run: RunRecord, onAsk: OnAsk, emit: (frame: AgentEvent) => void, relay?: ApprovalRelay): ApprovalGate {
    return {
      ask: async (request, signal) => {
        const granted = await this.granted(run, request);
        if (granted !== undefined) return granted;
        if (onAsk === 'deny') return { approved: false, text: CANNOT_WAIT };
        return this.askAndWait(run, request, emit, signal, relay);
      },
    };
  }

  list(userId: string, status: ApprovalStatus | undefined): Promise<{ items: ApprovalRecord[]; total: number }> {
    return this.options.store.listApprovals(userId, status ?? null);
  }

  /** The owner's answer: 404 unknown, 403 another user's, 409 decided already (or expired meanwhile). */
  async decide(id: string, userId: string, decision: ApprovalDecision, message: string | undefined): Promise<ApprovalRecord> {
    if (!UUID.test(id)) throw new ApprovalNotFoundError();
    const found = await this.options.store.findApproval(id.toLowerCase());
    if (!found) throw new ApprovalNotFoundError();
    if (found.userId !== userId) throw new ApprovalForbiddenError();
    if (found.status !== 'pending') throw new ApprovalDecidedError();
    const status = decision === 'deny' ? 'denied' : 'approved';
    const now = this.now();
    const decided = await this.options.store.decideApproval(found.id, { status, message: message ?? null, now }, decidedEntry(userId, decision, now));
    if (!decided) throw new ApprovalDecidedError();
    if (decision === 'approve_always') {
      for (const match of JSON.parse(decided.grantMatch) as string[]) {
        await this.options.store.addGrant({ userId, workingDir: decided.workingDir, tool: decided.tool, match }, this.now(), ruleEntry(decided, match, this.now()));
      }
    }
    this.waiters.get(decided.id)?.();
    await this.options.bus.publish(decided.runId);
    await this.announce(userId);
    return decided;
  }

  /**
   * Calls `listener` when the user's pending approvals may have changed (asked, answered, expired,
   * ended with their run), here or on another replica; returns the unsubscribe function.
   */
  watch(userId: string, listener: () => void): () => void {
    return this.options.bus.subscribe(userTopic(userId), () => listener());
  }

  /** How often a watcher should read on its own, for notifications the bus may lose. */
  get watchPollMs(): number {
    return this.options.bus.pollMs;
  }

  /** Tells the user's watchers, on every replica; a lost notice is made up by their poll. */
  private async announce(userId: string): Promise<void> {
    await this.options.bus.publish(userTopic(userId));
  }

  /**
   * Approved by approve_always grants of this user and working directory, when they cover every
   * rule that asked; undefined when the user must be asked. A call judged by its reach must act
   * inside that directory only (what it does elsewhere no checkpoint gives back), and is approved
   * with the grant's real working directory as its scope. One granted by name (an MCP tool) is
   * approved as a call the user answered: its name is what the user said yes to.
   */
  private async granted(run: RunRecord, request: ApprovalAsk): Promise<ApprovalAnswer | undefined> {
    if (request.matches.length === 0) return undefined;
    const root = request.byName === true ? undefined : realDirectory(run.workingDir);
    if (request.byName !== true && (root === undefined || !actsInside(root, request.reach))) return undefined;
    const granted = await this.options.store.grantedMatches(run.userId, run.workingDir, request.tool);
    if (!request.matches.every((match) => granted.includes(match))) return undefined;
    return root === undefined ? { approved: true } : { approved: true, scope: root };
  }

  private async askAndWait(run: RunRecord, request: ApprovalAsk, emit: (frame: AgentEvent) => void, signal: AbortSignal, relay?: ApprovalRelay): Promise<ApprovalAnswer> {
    const createdAt = this.now();
    const approval = await this.options.store.createApproval({
      id: randomUUID(),
      runId: run.id,
      userId: run.userId,
      tool: request.tool,
      args: JSON.stringify(request.args),
      reason: request.reason,
      workingDir: run.workingDir,
      grantMatch: JSON.stringify(request.matches),
      createdAt,
      expiresAt: new Date(createdAt.getTime() + this.options.timeoutMs),
    });
    await this.announce(run.userId);
    emit({
      event: 'approval_requested',
      approval_id: approval.id,
      tool: approval.tool,
      args: request.args,
      reason: approval.reason,
      expires_at: approval.expiresAt.toISOString(),
    });
    const settled = new AbortController();
    let decided: ApprovalRecord;
    try {
      relay?.(approval, settled.signal);
      decided = await this.waitForDecision(approval, signal);
    } finally {
      settled.abort();
    }
    await this.options.runs.updateRun(run.id, { status: 'running' }, ['waiting_approval']);
    const decision = decided.status === 'approved' ? 'approved' : 'denied';
    emit({ event: 'approval_resolved', approval_id: decided.id, decision, ...(decided.message === null ? {} : { message: decided.message }) });
    if (decided.status === 'approved') return { approved: true };
    return { approved: false, text: decided.message ? `Denied by the user: ${decided.message}` : 'Denied by the user' };
  }

  /** Resolves with the decided approval; denies it itself on expiry, and on abort before rethrowing. */
  private async waitForDecision(approval: ApprovalRecord, signal: AbortSignal): Promise<ApprovalRecord> {
    const wake = new Wake();
    this.waiters.set(approval.id, wake.notify);
    const unsubscribe = this.options.bus.subscribe(approval.runId, wake.notify);
    const poll = setInterval(wake.notify, this.options.pollMs ?? 2000);
    const expiry = setTimeout(wake.notify, Math.max(0, approval.expiresAt.getTime() - this.now().getTime()));
    signal.addEventListener('abort', wake.notify, { once: true });
    try {
      for (;;) {
        const current = await this.options.store.findApproval(approval.id);
        if (!current) throw new ApprovalNotFoundError();
        if (current.status !== 'pending') return current;
        if (signal.aborted) {
          await this.options.store.denyPendingOfRun(approval.runId, messageOf(signal.reason), this.now());
          await this.announce(approval.userId);
          signal.throwIfAborted();
        }
        if (this.now() >= current.expiresAt) {
          const now = this.now();
          await this.options.store.decideApproval(approval.id, { status: 'denied', message: APPROVAL_TIMED_OUT, now }, expiredEntry(now));
          await this.announce(approval.userId);
          continue;
        }
        await wake.next();
      }
    } finally {
      this.waiters.delete(approval.id);
      unsubscribe();
      clearInterval(poll);
      clearTimeout(expiry);
      signal.removeEventListener('abort', wake.notify);
    }
  }
}

function realDirectory(path: string): string | undefined {
  try {
    return resolveReal(path);
  } catch {
    return undefined;
  }
}

/** Every path inside the directory; an unknown reach is not inside. */
const actsInside = (root: string, reach: readonly string[] | undefined): boolean => reach !== undefined && reach.every((path) => isWithin(root, path));

const messageOf = (reason: unknown): string => (reason instanceof Error ? reason.message : String(reason));
