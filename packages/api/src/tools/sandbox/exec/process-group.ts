import { readdirSync, readFileSync } from 'node:fs';

/** Signals a whole process group (the command and everything it started that stayed in it). */
export function signalGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    // Already gone.
  }
}

/** Signals one process; false if it is gone. */
export function signalProcess(pid: number, signal: NodeJS.Signals): boolean {
  try {
    process.kill(pid, signal);
    return true;
  } catch {
    return false;
  }
}

/** Bounds the walk: a sandbox holds at most SANDBOX_MAX_PROCESSES processes, far fewer than this. */
const TREE_LIMIT = 4096;

/**
 * Signals every process under `pid` (not `pid` itself), found through /proc's `children` lists:
 * the processes of a sandbox under its init. Returns how many were signalled. Processes started
 * meanwhile may be missed; the caller's SIGKILL of the init ends those with the namespace.
 */
export function signalTree(pid: number, signal: NodeJS.Signals): number {
  let count = 0;
  const pending = childrenOf(pid);
  const seen = new Set<number>();
  while (pending.length > 0 && seen.size < TREE_LIMIT) {
    const next = pending.pop() as number;
    if (seen.has(next)) continue;
    seen.add(next);
    pending.push(...childrenOf(next));
    if (signalProcess(next, signal)) count++;
  }
  return count;
}

/** The children of every thread of `pid` (a child belongs to the thread that forked it). */
function childrenOf(pid: number): number[] {
  try {
    return readdirSync(`/proc/${pid}/task`).flatMap((task) =>
      readFileSync(`/proc/${pid}/task/${task}/children`, 'latin1')
        .split(' ')
        .filter((word) => /^\d+$/.test(word))
        .map(Number),
    );
  } catch {
    return [];
  }
}
