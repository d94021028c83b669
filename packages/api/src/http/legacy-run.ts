import type { FastifyReply } from 'fastify';
import type { RunRecord } from '../db/run-repository.js';
import type { RunService } from '../runs/run-service.js';
import { UnauthorizedError } from '../errors.js';
import { watchCredential } from './credential-watch.js';
import { streamRunEvents } from './run-event-stream.js';

export const RUN_ID_HEADER = 'x-run-id';

/** A legacy client further behind than this (1 MiB) is closed: the original streams promised no replay. */
const LEGACY_MAX_BACKLOG_CHARS = 1024 * 1024;
/** The run's id in the header, and on the request's remaining log lines: this request is the run. */
function identifyRun(reply: FastifyReply, runId: string): void {
  reply.header(RUN_ID_HEADER, runId);
  reply.log = reply.log.child({ run_id: runId });
  reply.request.log = reply.log;
}

/**
 * The legacy blocking routes: the run is stored like any other, but this request waits for its end,
 * and a client that goes away cancels it, as before runs were stored. So does a credential that
 * stops being valid meanwhile (a revoked key, a disabled user, a signed-out console session): the
 * answer, which carries what the run found, is then a 401 as the next request would get, not the
 * run's text.
 */
export async function awaitRun(runs: RunService, reply: FastifyReply, run: RunRecord): Promise<RunRecord> {
  identifyRun(reply, run.id);
  const onClose = (): void => {
    if (!reply.raw.writableFinished) runs.abandon(run.id);
  };
  reply.raw.once('close', onClose);
  let stopWatching = (): void => undefined;
  const revoked = new Promise<never>((_resolve, reject) => {
    stopWatching = watchCredential(reply.request, () => {
      runs.abandon(run.id);
      reject(new UnauthorizedError('Invalid API key'));
    });
  });
  try {
    return await Promise.race([runs.finished(run.id), revoked]);
  } finally {
    stopWatching();
    reply.raw.off('close', onClose);
  }
}

/**
 * The legacy streams: the run's events as `data:` frames only (no ids), from its first event to its
 * last; a client that disconnects cancels the run.
 */
export async function streamLegacyRun(runs: RunService, reply: FastifyReply, run: RunRecord, pingIntervalMs?: number): Promise<void> {
  identifyRun(reply, run.id);
  await streamRunEvents(reply, {
    runs,
    run,
    after: 0,
    withIds: false,
    onClientGone: () => runs.abandon(run.id),
    maxBacklogChars: LEGACY_MAX_BACKLOG_CHARS,
    ...(pingIntervalMs === undefined ? {} : { pingIntervalMs }),
  });
}
