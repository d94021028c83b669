import type { ParsedCall } from './call-shapes.js';

/** A stretch of the answer a finder's markers claim, with its calls when it holds nothing else. */
export interface Region {
  start: number;
  end: number;
  calls?: ParsedCall[];
}

/**
 * The regions kept so far, none overlapping another. A finder asks whether a region is free
 * before it parses what the region holds, so that only kept regions are parsed: a long answer of
 * many overlapping candidates (nested or unclosed markers) costs one parse per kept region.
 */
export class Claims {
  /** Kept by earlier finders, sorted by start (and so by end, as none overlap). */
  private settled: Region[] = [];
  /** Kept by the current finder, in the order it found them (by start). */
  private current: Region[] = [];

  isFree(start: number, end: number): boolean {
    const last = this.current.at(-1);
    if (last !== undefined && start < last.end && last.start < end) return false;
    const before = this.lastStartingBefore(end);
    return before === undefined || before.end <= start;
  }

  /** The region holding position `at`, if any. */
  holding(at: number): Region | undefined {
    const last = this.current.at(-1);
    if (last !== undefined && last.start <= at && at < last.end) return last;
    const before = this.lastStartingBefore(at + 1);
    return before !== undefined && at < before.end ? before : undefined;
  }

  /** Keeps a region the current finder found free. */
  add(region: Region): void {
    this.current.push(region);
  }

  /** Ends the current finder's turn: its regions join the settled ones. */
  settle(): void {
    if (this.current.length === 0) return;
    this.settled = mergeByStart(this.settled, this.current);
    this.current = [];
  }

  regions(): Region[] {
    this.settle();
    return this.settled;
  }

  private lastStartingBefore(end: number): Region | undefined {
    let low = 0;
    let high = this.settled.length;
    while (low < high) {
      const middle = (low + high) >>> 1;
      if (this.settled[middle]!.start < end) low = middle + 1;
      else high = middle;
    }
    return low > 0 ? this.settled[low - 1] : undefined;
  }
}

function mergeByStart(a: readonly Region[], b: readonly Region[]): Region[] {
  const out: Region[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length || j < b.length) {
    if (j >= b.length || (i < a.length && a[i]!.start <= b[j]!.start)) out.push(a[i++]!);
    else out.push(b[j++]!);
  }
  return out;
}
