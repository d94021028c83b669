import { signalGroup, signalProcess, signalTree } from './process-group.js';

/** `guard`: the run's guard stopped it (RunOptions.guard: the disk floor). */
export type StopReason = 'timeout' | 'abort' | 'flood' | 'guard';

/** A bubblewrap started by the run: the sandbox's init once bubblewrap reported it, and whether bubblewrap is gone. */
interface Sandbox {
  init?: number | undefined;
  exited: boolean;
  onExit: (() => void)[];
}

/** How long a bubblewrap whose sandbox was killed may take to notice before its group is killed too. */
const OUTER_GRACE_MS = 1000;

/**
 * Every process group a run started. Stopping sends SIGTERM to each group, then SIGKILL after a
 * grace period, so children that ignore SIGTERM and the processes they started go too.
 *
 * A bubblewrap and its sandbox share a group, but signalling that group ends the outer bubblewrap
 * at once, and with it (--die-with-parent) the sandbox's init and so every process of the
 * namespace: the command's grace period was cut to nothing (git had no time to remove its lock
 * files). So a sandbox whose init is known is stopped from the inside out: SIGTERM to the
 * processes under its init, then SIGKILL to the init (the kernel ends its whole PID namespace);
 * bubblewrap, which exits by itself once its sandbox is gone, is signalled only if it lingers.
 */
export class ProcessGroups {
  private readonly started = new Set<number>();
  private readonly sandboxes = new Map<number, Sandbox>();
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

  /** `pid` is a bubblewrap: `init` is its sandbox's first process, `exited` when bubblewrap is gone. */
  sandbox(pid: number, init: Promise<number | undefined>, exited: Promise<unknown>): void {
    const sandbox: Sandbox = { exited: false, onExit: [] };
    this.sandboxes.set(pid, sandbox);
    void init.then((found) => {
      if (found !== undefined && !sandbox.exited) sandbox.init = found;
    });
    void exited.then(() => {
      sandbox.exited = true;
      sandbox.init = undefined;
      for (const callback of sandbox.onExit.splice(0)) callback();
    });
  }

  stop(reason: StopReason): void {
    if (this.stopped) return;
    this.reason = reason;
    for (const pid of this.started) {
      const init = this.sandboxes.get(pid)?.init;
      if (init === undefined) signalGroup(pid, 'SIGTERM');
      // Nothing under the init yet (still setting up): nothing to be gentle with.
      else if (signalTree(init, 'SIGTERM') === 0) this.killSandbox(pid, init);
    }
    this.killTimer = setTimeout(() => this.killAll(), this.graceMs);
  }

  /**
   * Stops at once, without SIGTERM's grace: a process that ignores SIGTERM would go on for the
   * whole grace period doing what it was stopped for (filling the disk).
   */
  kill(reason: StopReason): void {
    if (this.stopped) return;
    this.reason = reason;
    this.killAll();
  }

  /** Kills whatever is left in these groups (stragglers a finished command left behind). */
  killAll(pids: Iterable<number> = this.started): void {
    for (const pid of pids) {
      const init = this.sandboxes.get(pid)?.init;
      if (init === undefined) signalGroup(pid, 'SIGKILL');
      else this.killSandbox(pid, init);
    }
  }

  private killSandbox(pid: number, init: number): void {
    const sandbox = this.sandboxes.get(pid) as Sandbox;
    signalProcess(init, 'SIGKILL');
    const lingering = setTimeout(() => signalGroup(pid, 'SIGKILL'), OUTER_GRACE_MS);
    lingering.unref();
    // Then the group, for anything bubblewrap left in it outside the sandbox (nothing, normally).
    sandbox.onExit.push(() => {
      clearTimeout(lingering);
      signalGroup(pid, 'SIGKILL');
    });
  }

  dispose(): void {
    if (this.killTimer !== undefined) clearTimeout(this.killTimer);
    this.killAll();
  }
}
