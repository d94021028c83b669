import { setTimeout as sleep } from 'node:timers/promises';
import { ApprovalRequestedEvent, describeCall, type ApprovalDecision } from '@mada/protocol';
import type { ApiClient } from '../api/client.js';
import { ApiError, RequestCancelledError } from '../api/errors.js';
import { safeText } from '../ui/safe-text.js';
import type { Terminal } from '../ui/terminal.js';
import type { TurnEvent } from './event-loop.js';

export const APPROVAL_QUESTION = 'Allow? [y]es / [n]o / [a]lways ';

const ANSWERS: Record<string, ApprovalDecision> = { y: 'approve', yes: 'approve', n: 'deny', no: 'deny', a: 'approve_always', always: 'approve_always' };

export interface ApprovalPromptDeps {
  client: ApiClient;
  terminal: Terminal;
  /** Reads one answer line (null: input ended); `withdrawn` takes the question back. */
  read(question: string, withdrawn: AbortSignal): Promise<string | null>;
  signal: AbortSignal;
  /** How often to check whether the approval was answered elsewhere (default 1 s). */
  pollMs?: number;
}

/** The abort reason when the approval stopped waiting while the question was on screen. */
class AnsweredElsewhere extends Error {}

/** What a chat transport calls with each `approval_requested` frame: resolves once it is answered. */
export type ApprovalHandler = (frame: ApprovalRequestedEvent) => Promise<void>;

export { describeCall } from '@mada/protocol';

/**
 * Shows what the agent wants to run and asks until it gets y, n or a; the answer goes to
 * POST /approvals/{id}. Input ending counts as no. An approval answered from another terminal
 * (or expired) while the question is on screen takes the question back; one answered just as
 * the answer here was sent (409) is reported and left as it is.
 */
export function approvalPrompt(deps: ApprovalPromptDeps): ApprovalHandler {
  return async (frame) => {
    const { terminal } = deps;
    const call = describeCall(frame);
    terminal.print(`${terminal.style('yellow', 'Approval needed')} ${call}`);
    terminal.print(terminal.style('dim', `  ${safeText(frame.reason)} · expires ${new Date(frame.expires_at).toLocaleTimeString()}`));
    // Blank lines or a long run of spaces can push the start of a call out of sight, leaving a
    // harmless tail above the question; the user is told when part of it is off the screen.
    const height = terminal.rowsFor(`Approval needed ${call}`);
    if (terminal.rows !== undefined && height + 2 > terminal.rows) {
      terminal.print(terminal.style('yellow', `The call takes ${height} lines, more than the screen shows: scroll up to read all of it before you answer.`));
    }
    const stillPending = new AbortController();
    const watching = watchPending(deps, frame.approval_id, stillPending);
    let decision: ApprovalDecision;
    try {
      decision = await askDecision(deps, stillPending.signal);
    } catch (error) {
      if (!(error instanceof AnsweredElsewhere)) throw error;
      // The question is still on its line, unanswered.
      terminal.print();
      terminal.print(terminal.style('dim', 'Answered elsewhere (or it expired).'));
      return;
    } finally {
      stillPending.abort(new AnsweredElsewhere());
      await watching;
    }
    try {
      await deps.client.decideApproval(frame.approval_id, { decision });
    } catch (error) {
      if (error instanceof ApiError && error.status === 409) {
        terminal.print(terminal.style('dim', 'Already answered (from elsewhere, or it expired).'));
        return;
      }
      throw error;
    }
  };
}

/** The chat's event-loop hook: the spinner stops while the question is on screen. */
export function approvalHandler(answer: ApprovalHandler): (event: TurnEvent) => Promise<void> {
  return async ({ frame, progress }) => {
    const parsed = ApprovalRequestedEvent.safeParse(frame);
    if (!parsed.success) return;
    progress.pause();
    try {
      await answer(parsed.data);
    } finally {
      progress.start();
    }
  };
}

/**
 * Until `pending` aborts (the question was answered here): checks the user's waiting approvals and
 * aborts `pending` once this one is no longer among them. A check that fails is tried again.
 */
async function watchPending(deps: ApprovalPromptDeps, approvalId: string, pending: AbortController): Promise<void> {
  const pollMs = deps.pollMs ?? 1000;
  while (!pending.signal.aborted) {
    await sleep(pollMs, undefined, { signal: pending.signal }).catch(() => undefined);
    if (pending.signal.aborted) return;
    const waiting = await deps.client.listApprovals('pending').catch(() => undefined);
    if (waiting !== undefined && !waiting.approvals.some((approval) => approval.id === approvalId)) pending.abort(new AnsweredElsewhere());
  }
}

async function askDecision(deps: ApprovalPromptDeps, stillPending: AbortSignal): Promise<ApprovalDecision> {
  for (;;) {
    const line = await untilAborted(deps.read(APPROVAL_QUESTION, stillPending), deps.signal);
    if (line === null) return 'deny';
    const decision = ANSWERS[line.trim().toLowerCase()];
    if (decision) return decision;
    deps.terminal.print('Answer y (run it), n (refuse it) or a (run it and stop asking for this here).');
  }
}

/** Ctrl-C while asking cancels the turn, as it does while the run streams. */
function untilAborted<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(new RequestCancelledError());
  return new Promise((resolve, reject) => {
    const onAbort = (): void => reject(new RequestCancelledError());
    signal.addEventListener('abort', onAbort, { once: true });
    work.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}
