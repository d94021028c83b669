import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { processEnded } from '../../util/pid-alive.js';

export interface ResourceLimits {
  /** SANDBOX_MEMORY_MB: the address space of each process. */
  memoryMb: number;
  /** SANDBOX_MAX_PROCESSES: processes (and threads) in one sandbox. */
  maxProcesses: number;
  /** SANDBOX_MAX_FILE_MB: the largest file a process may write (RLIMIT_FSIZE); absent: no limit. */
  maxFileMb?: number;
}

/**
 * util-linux `prlimit` in front of the program, inside the sandbox: the process-count limit then
 * counts only the sandbox's own user namespace, not every process of the service's user.
 */
export function limitedCommand(prlimitPath: string, limits: ResourceLimits, command: readonly string[]): string[] {
  const bytes = limits.memoryMb * 1024 * 1024;
  // A write past the file size limit fails with EFBIG, and the writer gets SIGXFSZ (it dies unless it ignores that, as python does).
  const fileSize = limits.maxFileMb === undefined ? [] : [`--fsize=${limits.maxFileMb * 1024 * 1024}`];
  return [prlimitPath, `--as=${bytes}`, `--nproc=${limits.maxProcesses}`, ...fileSize, '--', ...command];
}

const V1_PIDS = '/sys/fs/cgroup/pids';
const V2_ROOT = '/sys/fs/cgroup';

/** The cgroup directory of this process in the hierarchy `marker` selects (`pids` in v1, '' in v2). */
function ownCgroup(marker: (controllers: string) => boolean): string | undefined {
  let text: string;
  try {
    text = readFileSync('/proc/self/cgroup', 'utf8');
  } catch {
    return undefined;
  }
  for (const line of text.split('\n')) {
    const [, controllers, path] = line.split(':');
    if (controllers !== undefined && path !== undefined && marker(controllers)) return path;
  }
  return undefined;
}

/** Whether a child cgroup with a pids limit can be made below `dir` (then removed again). */
function canLimitBelow(dir: string): boolean {
  const probe = join(dir, `mada-probe-${process.pid}`);
  try {
    mkdirSync(probe);
    try {
      writeFileSync(join(probe, 'pids.max'), '1');
      return true;
    } finally {
      rmdirSync(probe);
    }
  } catch {
    return false;
  }
}

/**
 * Where per-call pids cgroups can be made, if anywhere. Needed when the service runs as root: the
 * kernel never applies RLIMIT_NPROC to uid 0, even inside a user namespace, so only a pids cgroup
 * stops a fork bomb there.
 */
export function findPidsCgroup(): string | undefined {
  const v1 = ownCgroup((c) => c.split(',').includes('pids'));
  if (v1 !== undefined) {
    const dir = join(V1_PIDS, v1);
    if (canLimitBelow(dir)) return dir;
  }
  const v2 = ownCgroup((c) => c === '');
  if (v2 !== undefined) {
    const dir = join(V2_ROOT, v2);
    try {
      if (readFileSync(join(dir, 'cgroup.subtree_control'), 'utf8').split(/\s+/).includes('pids') && canLimitBelow(dir)) return dir;
    } catch {
      return undefined;
    }
  }
  return undefined;
}

/**
 * pids cgroups for tool calls, made once and reused: making a cgroup costs tens of milliseconds,
 * far more than the sandbox itself. A tool call borrows one for all its processes and gives it back
 * when they are gone; one that still holds processes is not reused.
 */
export class PidsCgroupPool {
  private readonly free: string[] = [];
  private readonly made: string[] = [];
  private count = 0;
  /**
   * Unique to this pool: cgroups outlive a process that was killed, and a later process may get
   * the same pid (a reused name would make every sandbox start fail with EEXIST).
   */
  private readonly prefix = `mada-${process.pid}-${randomBytes(4).toString('hex')}`;

  constructor(private readonly base: string) {
    removeAbandoned(base);
    process.once('exit', () => this.removeAll());
  }

  acquire(maxProcesses: number): string {
    let dir = this.free.pop();
    // Charged again since its release (see charged): made anew rather than started full.
    while (dir !== undefined && charged(dir)) dir = this.free.pop();
    dir ??= this.make();
    writeFileSync(join(dir, 'pids.max'), String(maxProcesses));
    return dir;
  }

  release(dir: string): void {
    if (!charged(dir)) this.free.push(dir);
  }

  private make(): string {
    const dir = join(this.base, `${this.prefix}-${this.count++}`);
    mkdirSync(dir);
    this.made.push(dir);
    return dir;
  }

  private removeAll(): void {
    for (const dir of this.made) {
      try {
        rmdirSync(dir);
      } catch {
        // Still in use by a process that outlived the service; the kernel keeps it until empty.
      }
    }
  }
}

/**
 * Whether processes still count against the cgroup. `cgroup.procs` empties when they exit, but
 * `pids.current` keeps them until they are reaped: a killed sandbox's processes are reaped by the
 * host's init, which under load can take a while, and a cgroup reused meanwhile starts full
 * (`bwrap: Can't fork for pid 1`). Unreadable counts as charged.
 */
function charged(dir: string): boolean {
  try {
    return readFileSync(join(dir, 'pids.current'), 'utf8').trim() !== '0';
  } catch {
    return true;
  }
}

const OURS = /^mada-(\d+)-/;

/** Removes the empty pool cgroups of services that died without cleaning up (killed, crashed, or a zombie nobody reaped). */
function removeAbandoned(base: string): void {
  let names: string[];
  try {
    names = readdirSync(base);
  } catch {
    return;
  }
  for (const name of names) {
    const pid = Number(OURS.exec(name)?.[1]);
    if (!Number.isInteger(pid) || pid === process.pid || !processEnded(pid)) continue;
    try {
      rmdirSync(join(base, name));
    } catch {
      // Still holds a process that outlived its service: the kernel keeps it until it is empty.
    }
  }
}

/**
 * The command, started through `sh`, which moves itself into the cgroup before it becomes the
 * sandbox. On cgroup v1 `sh` writes 0 ("this thread") to `tasks`: the kernel then skips the global
 * lock a `cgroup.procs` write takes, which waits for an RCU grace period (10-15 ms per tool process
 * when no other move just happened). `sh` has one thread, so the whole process moves either way.
 */
export function inCgroup(shellPath: string, cgroup: string, command: readonly string[]): string[] {
  const tasks = join(cgroup, 'tasks');
  return existsSync(tasks)
    ? [shellPath, '-c', 'echo 0 > "$0" && exec "$@"', tasks, ...command]
    : [shellPath, '-c', 'echo $$ > "$0" && exec "$@"', join(cgroup, 'cgroup.procs'), ...command];
}
