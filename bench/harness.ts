/**
 * Benchmarks report a ratio against a baseline measured in the same run, so the figure means the
 * same on a fast laptop and a loaded CI machine. Each `*.bench.ts` default-exports a function that
 * returns its results; `run.ts` prints them.
 */
export interface BenchResult {
  name: string;
  baseline: string;
  baselineMs: number;
  subjectMs: number;
  /** subjectMs / baselineMs; for `overhead` results, milliseconds beyond the baseline per unit. */
  ratio: number;
  /**
   * `ratio` (default); `overhead`: (subject - baseline) / units, in milliseconds; `absolute`: the
   * subject itself in `unit` (a resource with a fixed ceiling), the baseline shown beside it.
   */
  kind?: 'ratio' | 'overhead' | 'absolute';
  /** For `absolute` results: what subject, baseline and target are measured in. */
  unit?: string;
  /** The target for the ratio (lower is better), if it has one. */
  target?: number;
  note?: string;
}

export type Bench = () => Promise<BenchResult[]>;

/** Median wall time of `runs` calls of `fn` after `warmup` unmeasured calls, in milliseconds. */
export async function medianMs(fn: () => Promise<unknown> | unknown, runs = 15, warmup = 3): Promise<number> {
  for (let i = 0; i < warmup; i++) await fn();
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    const start = process.hrtime.bigint();
    await fn();
    times.push(Number(process.hrtime.bigint() - start) / 1e6);
  }
  times.sort((a, b) => a - b);
  return times[Math.floor(times.length / 2)] ?? Number.NaN;
}

/**
 * Median wall times of a baseline and a subject measured in turns (baseline, subject, baseline,
 * ...) after `warmup` unmeasured turns: on a machine whose load changes from second to second,
 * both see the same load, which measuring one after the other does not give.
 */
export async function interleavedMediansMs(
  baseline: () => Promise<unknown> | unknown,
  subject: () => Promise<unknown> | unknown,
  runs = 15,
  warmup = 3,
): Promise<{ baselineMs: number; subjectMs: number }> {
  const time = async (fn: () => Promise<unknown> | unknown): Promise<number> => {
    const start = process.hrtime.bigint();
    await fn();
    return Number(process.hrtime.bigint() - start) / 1e6;
  };
  for (let i = 0; i < warmup; i++) {
    await baseline();
    await subject();
  }
  const times = { baseline: [] as number[], subject: [] as number[] };
  for (let i = 0; i < runs; i++) {
    times.baseline.push(await time(baseline));
    times.subject.push(await time(subject));
  }
  const median = (values: number[]): number => values.sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? Number.NaN;
  return { baselineMs: median(times.baseline), subjectMs: median(times.subject) };
}

export function result(name: string, baseline: string, baselineMs: number, subjectMs: number, target?: number, note?: string): BenchResult {
  return { name, baseline, baselineMs, subjectMs, ratio: subjectMs / baselineMs, ...(target === undefined ? {} : { target }), ...(note ? { note } : {}) };
}

/** An absolute target: milliseconds the subject adds to the baseline, per step or per frame. */
export function overhead(name: string, baseline: string, baselineMs: number, subjectMs: number, units: number, targetMs: number, note?: string): BenchResult {
  return { name, baseline, baselineMs, subjectMs, ratio: (subjectMs - baselineMs) / units, kind: 'overhead', target: targetMs, ...(note ? { note } : {}) };
}

/** A fixed ceiling on a measured quantity (memory, say), shown beside the same quantity at rest. */
export function absolute(name: string, baseline: string, baselineValue: number, subjectValue: number, unit: string, target: number, note?: string): BenchResult {
  return { name, baseline, baselineMs: baselineValue, subjectMs: subjectValue, ratio: subjectValue, kind: 'absolute', unit, target, ...(note ? { note } : {}) };
}
