import type { RunEventBus } from './event-bus.js';
import { ACTIVE_RUN_STATUSES, type RunEventRecord, type RunRepository } from '../db/run-repository.js';

const PAGE = 200;

export interface FollowOptions {
  store: RunRepository;
  bus: RunEventBus;
  runId: string;
  /** Events with seq above this are delivered. */
  after: number;
  /** Delivers the next events, in order; resolves once the consumer can take more (backpressure). */
  deliver(events: readonly RunEventRecord[]): Promise<void>;
  /** Stops following (the client went away). */
  signal: AbortSignal;
}

/** The last frame of every run: after it nothing follows. */
export const isFinalEvent = (data: string): boolean => data.startsWith('{"event":"done"') || data.startsWith('{"event":"error"');

/**
 * Delivers a run's stored events after `after`, then each new one as it is stored, until the final
 * `done` or `error` has been delivered (or the run has ended with nothing more to read). Reads page
 * by page, as the consumer drains, so a slow client costs no memory.
 */
export async function followRunEvents(options: FollowOptions): Promise<void> {
  const { store, bus, runId, signal } = options;
  let last = options.after;
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
      const page = carried.takeAfter(last) ?? (await store.eventsAfter(runId, last, PAGE));
      if (signal.aborted) return;
      const final = page.findIndex((event) => isFinalEvent(event.data));
      const batch = final < 0 ? page : page.slice(0, final + 1);
      // A page at a time: the consumer writes a replay in a few large writes, not one per frame.
      if (batch.length > 0) await options.deliver(batch);
      last = batch.at(-1)?.seq ?? last;
      if (final >= 0) return;
      if (page.length === PAGE || pending) continue;
      // Events came and the last one was not final: the run was active, and its end will be
      // published. Only a read that found nothing asks the store whether the run is still there.
      if (batch.length === 0) {
        const run = await store.findRun(runId);
        // A run's end and its final event are stored together: an ended run has nothing more to come.
        if (!run || !ACTIVE_RUN_STATUSES.includes(run.status)) {
          if (run && run.lastEventId > last) continue;
          return;
        }
        if (pending) continue;
      }
      await new Promise<void>((resolve) => {
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
