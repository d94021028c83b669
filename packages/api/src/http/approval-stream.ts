import type { FastifyReply } from 'fastify';
import { toApprovalResponse } from '../approvals/approval-response.js';
import type { ApprovalService } from '../approvals/approval-service.js';
import { Wake } from '../util/wake.js';
import { SseStream } from './sse.js';

/**
 * A stream ends after this long and the client opens it again (EventSource does, after the
 * `retry` sent first): the caller is authenticated anew, so a session signed out or a key revoked
 * stops receiving within this.
 */
export const APPROVAL_STREAM_MS = 60_000;
const RECONNECT_MS = 500;

export interface ApprovalStreamOptions {
  approvals: ApprovalService;
  userId: string;
  pingIntervalMs?: number;
  /** Ends the stream early (the service closing). */
  signal: AbortSignal;
  onError: (error: unknown) => void;
  /** APPROVAL_STREAM_MS unless a test says otherwise. */
  maxMs?: number;
}

/**
 * The user's pending approvals as Server-Sent Events: the whole list on opening, then again each
 * time it changes. Each frame is read from the store when the user's approvals may have changed,
 * so a lost or doubled notice never shows a wrong list; one equal to the last sent is not sent.
 */
export async function streamPendingApprovals(reply: FastifyReply, options: ApprovalStreamOptions): Promise<void> {
  const { approvals, userId, signal } = options;
  const stream = new SseStream(reply, options.pingIntervalMs);
  const wake = new Wake();
  const unsubscribe = approvals.watch(userId, wake.notify);
  const poll = setInterval(wake.notify, approvals.watchPollMs);
  stream.signal.addEventListener('abort', wake.notify, { once: true });
  signal.addEventListener('abort', wake.notify, { once: true });
  const maxMs = options.maxMs ?? APPROVAL_STREAM_MS;
  const renew = setTimeout(wake.notify, maxMs);
  const started = performance.now();
  let last = '';
  try {
    await stream.sendRaw(`retry: ${RECONNECT_MS}\n\n`);
    while (!stream.closed && !signal.aborted && performance.now() - started < maxMs) {
      const { items, total } = await approvals.list(userId, 'pending');
      const text = JSON.stringify({ approvals: items.map(toApprovalResponse), total });
      if (text !== last) {
        last = text;
        await stream.sendRaw(`data: ${text}\n\n`);
      }
      await wake.next();
    }
  } catch (error) {
    // The client reconnects (EventSource does on its own) and reads the list afresh.
    options.onError(error);
  } finally {
    unsubscribe();
    clearInterval(poll);
    clearTimeout(renew);
    signal.removeEventListener('abort', wake.notify);
    stream.end();
  }
}
