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
  const unsubscribe = bus.subscribe(runId, () => {
    pending = true;
    wake?.();
  });
  const onAbort = (): void => wake?.();
  signal.addEventListener('abort', onAbort);
  try {
    while (!signal.aborted) {
      pending = false;
      const page = await store.eventsAfter(runId, last, PAGE);
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
