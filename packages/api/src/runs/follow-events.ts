import type { RunEventBus } from './event-bus.js';
import { ACTIVE_RUN_STATUSES, EVENT_PAGE_CHARS, type EventFrames, type RunEventRecord, type RunHead, type RunRepository } from '../db/run-repository.js';
/** Rows of the first page, before the size of the run's frames is known. */
const FIRST_PAGE_ROWS = 100;
/** Stored pages read at a time: a few reads for a long replay, a few hundred KiB held at most. */
const STORED_PAGES_PER_READ = 4;
/** The most rows a page may hold, however small the frames: bounds a page when large frames follow small ones. */
const MAX_PAGE_ROWS = 1000;

export interface FollowOptions {
  store: RunRepository;
  bus: RunEventBus;
  runId: string;
  /** Events with seq above this are delivered. */
  after: number;
  /** Frames with `id:` lines (resumable streams) or `data:` lines only (legacy streams). */
  withIds: boolean;
  /**
   * Delivers the next frames, in order, and the seq of the last whole one; resolves once the
   * consumer can take more (backpressure). `open`: the last frame goes on in the next delivery (a
   * large event, sent a slice at a time), and nothing else may be written in between.
   */
  deliver(frames: string | Buffer, lastSeq: number, open?: boolean): Promise<void>;
  /** Stops following (the client went away). */
  signal: AbortSignal;
  /**
   * The run as the caller read it before following (the route's ownership check): when it was
   * active then, the first look at the store needs neither its stored pages (written only at its
   * end) nor, when nothing is stored yet after `after`, its row.
   */
  seen?: { active: boolean; lastEventId: number };
}

/** What a follower may take from the run as read before following (FollowOptions.seen). */
export const seenRun = (run: Pick<RunHead, 'status' | 'lastEventId'>): NonNullable<FollowOptions['seen']> => ({
  active: ACTIVE_RUN_STATUSES.includes(run.status),
  lastEventId: run.lastEventId,
});

/**
 * Whether a page of frames ends with a run's final frame (`done` or `error`). Only the last frame
 * needs a look: the service stores a run's final event together with its end, and nothing after
 * it (every append is conditional on the run being active), so a final event is always the last.
 */
export function endsWithFinalFrame(frames: string | Buffer): boolean {
  // Frames end with their only blank line (event data is compact JSON, without line breaks).
  const before = frames.lastIndexOf('\n\n', frames.length - 3);
  const start = before < 0 ? 0 : before + 2;
  // Of bytes, only the last frame is decoded.
  const [text, from] = typeof frames === 'string' ? [frames, start] : [frames.toString('utf8', start), 0];
  const data = text.indexOf('data: ', from) + 'data: '.length;
  return text.startsWith('{"event":"done"', data) || text.startsWith('{"event":"error"', data);
}

/**
 * Delivers a page as it is, unless it came out much larger than planned (large frames after small
 * ones): then in pieces of about EVENT_PAGE_CHARS (or one larger frame), each once the previous
 * one was taken, so what waits unsent stays bounded. Seqs have no gaps: a piece's last seq is
 * `after` plus the frames delivered so far.
 */
async function deliverInPieces(page: EventFrames, after: number, deliver: FollowOptions['deliver']): Promise<void> {
  const frames = page.text;
  let start = 0;
  if (frames.length > 2 * EVENT_PAGE_CHARS) {
    let seq = after;
    // Each frame ends with the only blank line it holds.
    for (let end = frames.indexOf('\n\n') + 2; end > 1 && end < frames.length; end = frames.indexOf('\n\n', end) + 2) {
      seq += 1;
      if (end - start < EVENT_PAGE_CHARS) continue;
      await deliver(frames.slice(start, end), seq);
      start = end;
    }
  }
  await deliver(start === 0 ? frames : frames.slice(start), page.lastSeq);
}

/**
 * Delivers a run's stored events after `after`, then each new one as it is stored, until the final
 * `done` or `error` has been delivered (or the run has ended with nothing more to read). Reads page
 * by page, as the consumer drains, so a slow client costs no memory; a page is sized from the
 * frames before it to about EVENT_PAGE_CHARS, so a replay takes a few reads and a few large writes.
 * A long ended run is replayed from its stored pages (frames with ids, already joined) as far as
 * they go. Live events this process stored come with their signal and need no read.
 */
export async function followRunEvents(options: FollowOptions): Promise<void> {
  const { store, bus, runId, signal } = options;
  let last = options.after;
  let rows = FIRST_PAGE_ROWS;
  const seenActive = options.seen?.active === true;
  let paged = options.withIds && !seenActive;
  let firstLook = true;
  let wake: (() => void) | undefined;
  let pending = false;
  const carried = new CarriedEvents();
  const unsubscribe = bus.subscribe(runId, (stored) => {
    pending = true;
    carried.add(stored);
    wake?.();
  });
  const onAbort = (): void => wake?.();
  signal.addEventListener('abort', onAbort);
  try {
    while (!signal.aborted) {
      pending = false;
      const stored = paged ? await store.eventPagesAfter(runId, last, STORED_PAGES_PER_READ) : [];
      if (signal.aborted) return;
      if (stored.length > 0) {
        for (const page of stored) {
          await options.deliver(page.bytes, page.lastSeq);
          if (endsWithFinalFrame(page.bytes)) return;
          last = page.lastSeq;
        }
        continue;
      }
      // Once there are no stored pages (a live or short run has none), events are read row by row.
      paged = false;
      const handed = carried.takeAfter(last);
      const page = handed ? framesOf(handed, options.withIds) : await store.eventFramesAfter(runId, last, rows, options.withIds);
      if (signal.aborted) return;
      if (page && 'largeSeq' in page) {
        if (await deliverLarge(options, page.largeSeq)) return;
        last = page.largeSeq;
        firstLook = false;
        continue;
      }
      if (page) {
        // Seqs have no gaps, so the page holds lastSeq - last events.
        const count = page.lastSeq - last;
        await deliverInPieces(page, last, options.deliver);
        if (endsWithFinalFrame(page.text)) return;
        last = page.lastSeq;
        firstLook = false;
        if (!handed) {
          const full = count === rows;
          rows = Math.min(MAX_PAGE_ROWS, Math.max(1, Math.floor((EVENT_PAGE_CHARS * count) / page.text.length)));
          if (full || page.cut) continue;
        }
        if (pending) continue;
        // Events came and the last one was not final: the run was active, and its end will be published.
      } else if (firstLook && seenActive && last <= options.seen!.lastEventId) {
        // Nothing after `after`, which is not past the run's last event when it was seen active: its
        // end would have stored a final event after `after`, so it is still active, and its next
        // event (its end included) is published to this subscription, made before the read.
        firstLook = false;
        if (pending) continue;
      } else {
        // Only a read that found nothing asks the store whether the run is still there.
        const run = await store.viewRun(runId);
        // A run's end and its final event are stored together: an ended run has nothing more to come.
        if (!run || !ACTIVE_RUN_STATUSES.includes(run.status)) {
          if (run && run.lastEventId > last) continue;
          return;
        }
        if (pending) continue;
      }
      await new Promise<void>((resolve) => {
        // A client gone while the store was read found no `wake` to call: it must not wait a poll.
        if (signal.aborted) return resolve();
        // Also on its own now and then, in case a notification was lost (listener reconnecting).
        const timer = setTimeout(resolve, bus.pollMs);
        wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      wake = undefined;
    }
  } finally {
    unsubscribe();
    signal.removeEventListener('abort', onAbort);
  }
}

/**
 * Delivers one large event's frame a slice at a time, read off the event loop, each slice once the
 * one before was taken. Whether the stream is over: the frame was the run's final one, the client
 * went away, or the event is gone (its run deleted).
 */
async function deliverLarge(options: FollowOptions, seq: number): Promise<boolean> {
  let head: string | undefined = `${options.withIds ? `id: ${seq}\n` : ''}data: `;
  let final = false;
  for await (const slice of options.store.eventSlices(options.runId, seq)) {
    if (options.signal.aborted) return true;
    if (head === undefined) {
      await options.deliver(slice, seq - 1, true);
      continue;
    }
    // Slices are hundreds of KiB: the first holds the event's name.
    final = slice.startsWith('{"event":"done"') || slice.startsWith('{"event":"error"');
    await options.deliver(head + slice, seq - 1, true);
    head = undefined;
  }
  if (head !== undefined) return true;
  await options.deliver('\n\n', seq);
  return final;
}

/** Events handed over by the bus, as the frames a page read would have given. */
function framesOf(events: readonly RunEventRecord[], withIds: boolean): EventFrames {
  const text = events.map((event) => `${withIds ? `id: ${event.seq}\n` : ''}data: ${event.data}\n\n`).join('');
  return { text, lastSeq: events.at(-1)!.seq };
}

/** More carried events than this waiting (a slow consumer): they are dropped and the store read instead. */
const MAX_CARRIED = 64;

/**
 * Events the bus handed over as they were stored, kept until the follower takes them. Used only
 * when they continue exactly where the follower is; anything else (a gap, a signal without an
 * event, too many waiting) sends the follower to the store, which holds every event.
 */
class CarriedEvents {
  private events: RunEventRecord[] = [];
  private usable = true;

  add(stored: RunEventRecord | undefined): void {
    if (!stored || this.events.length >= MAX_CARRIED) this.usable = false;
    else this.events.push(stored);
  }

  /** The carried events right after `last`, in order, or undefined when the store must be read. */
  takeAfter(last: number): RunEventRecord[] | undefined {
    const events = this.events;
    const usable = this.usable;
    this.events = [];
    this.usable = true;
    if (!usable) return undefined;
    const next = events.filter((event) => event.seq > last);
    const contiguous = next.length > 0 && next.every((event, i) => event.seq === last + 1 + i);
    return contiguous ? next : undefined;
  }
}
