import type { FastifyReply } from 'fastify';
import type { RunHead } from '../db/run-repository.js';
import type { RunService } from '../runs/run-service.js';
import { SseStream } from './sse.js';

export interface RunEventStreamOptions {
  runs: RunService;
  /** The run as the route read it (its ownership check). */
  run: RunHead;
  after: number;
  /** `id: <n>` lines for resumable streams; the legacy streams send `data:` lines only. */
  withIds: boolean;
  pingIntervalMs?: number;
  /** Called when the client goes away before the last frame (legacy streams cancel their run). */
  onClientGone?: () => void;
  /**
   * Legacy streams: a client that falls further behind than this, in bytes (stored but unsent events
   * plus what waits in the socket), has its stream closed, which cancels its run as a disconnect does.
   */
  maxBacklogChars?: number;
}

const BACKLOG_CHECK_MS = 200;

/**
 * Sends a run's stored events as Server-Sent Events, then follows new ones until the last frame.
 * Each page of frames is written only once the socket has taken the previous one, so what waits
 * unsent is one page (sized to about 64 KiB from the frames before it) at most: the store, not memory, holds
 * the backlog of a slow client.
 */
export async function streamRunEvents(reply: FastifyReply, options: RunEventStreamOptions): Promise<void> {
  const stream = new SseStream(reply, options.pingIntervalMs);
  let finished = false;
  try {
    await options.runs.follow(options.run, {
      after: options.after,
      withIds: options.withIds,
      signal: stream.signal,
      deliver: (frames, lastSeq, open) => deliverWatched(reply, stream.sendRaw(frames, open), lastSeq, options),
    });
    finished = !stream.signal.aborted;
  } finally {
    if (!finished && stream.signal.aborted) options.onClientGone?.();
    stream.end();
  }
}

/**
 * Waits for the socket to take a frame; meanwhile, for a stream with a backlog limit, checks how
 * much the client has fallen behind and closes the connection once it is past the limit.
 */
async function deliverWatched(reply: FastifyReply, sent: Promise<void>, seq: number, options: RunEventStreamOptions): Promise<void> {
  const limit = options.maxBacklogChars;
  if (limit === undefined) return sent;
  let timer: NodeJS.Timeout | undefined;
  let checking = false;
  const tooFarBehind = new Promise<void>((resolve) => {
    timer = setInterval(() => {
      if (checking) return;
      checking = true;
      options.runs
        .storedAfter(options.run.id, seq)
        .then((stored) => {
          if (stored + reply.raw.writableLength > limit) {
            reply.raw.destroy();
            resolve();
          }
        })
        .catch(() => undefined)
        .finally(() => (checking = false));
    }, BACKLOG_CHECK_MS);
  });
  try {
    await Promise.race([sent, tooFarBehind]);
  } finally {
    clearInterval(timer);
  }
}
