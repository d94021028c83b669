import type { RunService } from './run-service.js';

export interface RunSweeperOptions {
  /** How often runs of dead processes are looked for (a fraction of the lease). */
  recoveryIntervalMs: number;
  /** How often ended runs past their retention are deleted. */
  retentionIntervalMs: number;
  onError(error: unknown): void;
  onRecovered?(count: number): void;
  /** Runs after each retention sweep and each recovery that found runs (checkpoint housekeeping). */
  afterSweep?(): Promise<void>;
}

/**
 * Ends runs whose process died (their lease ran out) and deletes ended runs past retention. Each
 * sweep is awaited before the next is scheduled; stop() waits for the one in progress.
 */
export class RunSweeper {
  private readonly timers = new Map<string, NodeJS.Timeout>();
  private readonly inFlight = new Set<Promise<unknown>>();
  private stopped = false;

  constructor(
    private readonly runs: RunService,
    private readonly options: RunSweeperOptions,
  ) {}

  start(): void {
    this.every('recovery', this.options.recoveryIntervalMs, async () => {
      const count = await this.runs.recoverInterrupted('expired');
      if (count > 0) this.options.onRecovered?.(count);
      if (count > 0) await this.options.afterSweep?.();
    });
    this.every('retention', this.options.retentionIntervalMs, async () => {
      await this.runs.sweepRetention();
      await this.options.afterSweep?.();
    });
  }

  async stop(): Promise<void> {
    this.stopped = true;
    for (const timer of this.timers.values()) clearTimeout(timer);
    await Promise.allSettled([...this.inFlight]);
  }

  private every(name: string, intervalMs: number, sweep: () => Promise<unknown>): void {
    const schedule = (): void => {
      if (this.stopped) return;
      const timer = setTimeout(() => {
        const running = sweep().catch(this.options.onError);
        this.inFlight.add(running);
        // Not awaited: the next sweep is scheduled when this one settles, and stop() awaits
        // `inFlight`. `running` cannot reject: its errors went to onError just above.
        void running.finally(() => {
          this.inFlight.delete(running);
          schedule();
        });
      }, intervalMs);
      timer.unref();
      this.timers.set(name, timer);
    };
    schedule();
  }
}
