import { signalGroup } from './process-group.js';

export type StopReason = 'timeout' | 'abort' | 'flood';

/**
 * Every process group a run started. Stopping sends SIGTERM to each group, then SIGKILL after a
 * grace period, so children that ignore SIGTERM and the processes they started go too.
 */
export class ProcessGroups {
  private readonly started = new Set<number>();
  private killTimer: NodeJS.Timeout | undefined;
  reason: StopReason | undefined;

  constructor(private readonly graceMs: number) {}

  get stopped(): boolean {
    return this.reason !== undefined;
  }

  add(pid: number): void {
    this.started.add(pid);
    // A group started after the stop (a race with a spawn in progress) is stopped at once.
    if (this.stopped) signalGroup(pid, 'SIGKILL');
  }

  stop(reason: StopReason): void {
    if (this.stopped) return;
    this.reason = reason;
    for (const pid of this.started) signalGroup(pid, 'SIGTERM');
    this.killTimer = setTimeout(() => this.killAll(), this.graceMs);
  }

  /** Kills whatever is left in these groups (stragglers a finished command left behind). */
  killAll(pids: Iterable<number> = this.started): void {
    for (const pid of pids) signalGroup(pid, 'SIGKILL');
  }

  dispose(): void {
    if (this.killTimer !== undefined) clearTimeout(this.killTimer);
    this.killAll();
  }
}
