import { setImmediate as nextTurn } from 'node:timers/promises';

/** How long work done in one go may keep the event loop before it lets other work run. */
export const SLICE_MS = 10;

/**
 * Long work on the event loop (a walk of a big tree, a hostile ignore file, a long body written from
 * memory) asks `due()` between steps and, when it is, awaits `pause()`: one turn of the loop every
 * `ms` of work, so other requests are answered meanwhile. Pausing by time rather than at every step
 * keeps the cost of a turn off short work, and keeps concurrent readers from interleaving so finely
 * that each holds its buffers across every other's turns.
 */
export class TimeSlice {
  private start = performance.now();

  constructor(private readonly ms = SLICE_MS) {}

  due(): boolean {
    return performance.now() - this.start > this.ms;
  }

  async pause(): Promise<void> {
    await nextTurn();
    this.start = performance.now();
  }
}
