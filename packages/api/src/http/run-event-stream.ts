import type { FastifyReply } from 'fastify';
import type { RunEventBus } from '../runs/event-bus.js';
import { followRunEvents } from '../runs/follow-events.js';
import type { RunEventRecord, RunRepository } from '../db/run-repository.js';
import { SseStream } from './sse.js';

export interface RunEventStreamOptions {
  store: RunRepository;
  bus: RunEventBus;
  runId: string;
  after: number;
  /** `id: <n>` lines for resumable streams; the legacy streams send `data:` lines only. */
  withIds: boolean;
  pingIntervalMs?: number;
  /** Called when the client goes away before the last frame (legacy streams cancel their run). */
  onClientGone?: () => void;
  /**
   * Legacy streams: a client that falls further behind than this (stored but unsent events plus
   * what waits in the socket) has its stream closed, which cancels its run as a disconnect does.
   */
  maxBacklogChars?: number;
}

const BACKLOG_CHECK_MS = 200;

const frameOf = (event: RunEventRecord, withIds: boolean): string =>
  withIds ? `id: ${event.seq}\ndata: ${event.data}\n\n` : `data: ${event.data}\n\n`;

/** Frames are written in groups up to this size: few writes for a replay, little waiting unsent. */
const WRITE_CHARS = 64 * 1024;

/** Joins frames into groups of about WRITE_CHARS and sends each, with the seq of its last event, once the previous one was taken. */
async function sendGrouped(events: readonly RunEventRecord[], withIds: boolean, send: (text: string, lastSeq: number) => Promise<void>): Promise<void> {
  let text = '';
  for (const [index, event] of events.entries()) {
    text += frameOf(event, withIds);
    if (text.length >= WRITE_CHARS || index === events.length - 1) {
      await send(text, event.seq);
      text = '';
    }
  }
}

/**
 * Sends a run's stored events as Server-Sent Events, then follows new ones until the last frame.
 * Each group of frames is written only once the socket has taken the previous ones, so what waits
 * unsent is one group (about 64 KiB, or one larger frame) at most: the store, not memory, holds
 * the backlog of a slow client.
 */
export async function streamRunEvents(reply: FastifyReply, options: RunEventStreamOptions): Promise<void> {
  const stream = new SseStream(reply, options.pingIntervalMs);
  let finished = false;
  try {
    await followRunEvents({
      store: options.store,
      bus: options.bus,
      runId: options.runId,
      after: options.after,
      signal: stream.signal,
      deliver: (events) => sendGrouped(events, options.withIds, (text, lastSeq) => deliverWatched(reply, stream.sendRaw(text), lastSeq, options)),
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
      options.store
        .eventTextAfter(options.runId, seq)
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
