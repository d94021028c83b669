import { constants } from 'node:fs';
import { lstat, open, readdir, readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';

/*
 * git and ripgrep open ignore and attributes files without looking at what they are, and opening a
 * FIFO for reading waits for a writer: one planted in the working directory (by a run's `bash`, or
 * an extracted archive) would hold every snapshot until git's timeout, so no run there could be
 * undone, and every search until the tool's. While such a process waits so, the service opens the
 * FIFOs of those names for writing and closes them again: the reader gets an empty file and goes
 * on. Nothing is paid while no process waits on a FIFO.
 */

/** How often a running process is looked at. */
export const FIFO_CHECK_MS = 500;
/** The processes looked at: the one started and its descendants (ripgrep under bubblewrap). */
const MAX_PROCESSES = 16;

/** Where a process may wait on a FIFO of one of `names`: below `tree`, and with `ancestors` in the directories above it. */
export interface FifoPlaces {
  tree: string;
  names: ReadonlySet<string>;
  ancestors?: boolean;
}

/** Looks at `pid` and its descendants every FIFO_CHECK_MS, releasing the FIFOs at `places` while one waits. Returns the stop. */
export function releaseFifoWaits(pid: number | undefined, places: FifoPlaces): () => void {
  if (pid === undefined) return () => undefined;
  let busy = false;
  const timer = setInterval(() => {
    if (busy) return;
    busy = true;
    // Not awaited: a timer callback has no one to hand it to, and `busy` keeps one look at a time.
    // It cannot reject: a look that fails is caught here and releases nothing.
    void anyWaitsOnFifo(pid)
      .then((waiting) => (waiting ? releaseFifos(places) : 0))
      .catch(() => 0)
      .finally(() => (busy = false));
  }, FIFO_CHECK_MS);
  timer.unref();
  return () => clearInterval(timer);
}

async function anyWaitsOnFifo(pid: number): Promise<boolean> {
  const pids = [pid];
  for (let i = 0; i < pids.length && pids.length < MAX_PROCESSES; i++) {
    if (await waitsOnFifo(pids[i] as number)) return true;
    pids.push(...(await childrenOf(pids[i] as number)));
  }
  return false;
}

async function childrenOf(pid: number): Promise<number[]> {
  const tasks = await readdir(`/proc/${pid}/task`).catch(() => []);
  const children: number[] = [];
  for (const task of tasks) {
    const text = await readFile(`/proc/${pid}/task/${task}/children`, 'utf8').catch(() => '');
    children.push(...text.split(' ').filter((field) => field !== '').map(Number));
  }
  return children;
}

/**
 * Whether a thread of the process may be waiting to open a FIFO (ripgrep opens files on worker
 * threads): the kernel says `wait_for_partner`, or hides where it waits (`0`) while the thread
 * sleeps. A process busy reading files is left alone.
 */
export async function waitsOnFifo(pid: number): Promise<boolean> {
  const tasks = await readdir(`/proc/${pid}/task`).catch(() => []);
  for (const task of tasks) {
    const dir = `/proc/${pid}/task/${task}`;
    const wchan = await readFile(`${dir}/wchan`, 'utf8').catch(() => undefined);
    if (wchan === 'wait_for_partner') return true;
    if (wchan !== '0' && wchan !== '') continue;
    const stat = await readFile(`${dir}/stat`, 'utf8').catch(() => '');
    // The state follows the command name in parentheses, which may itself hold a parenthesis.
    if (stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) === 'S') return true;
  }
  return false;
}

/** Opens each FIFO of the given names at `places` for writing, and closes it at once. */
export async function releaseFifos(places: FifoPlaces): Promise<number> {
  let released = 0;
  if (places.ancestors === true) {
    for (let dir = dirname(places.tree); ; dir = dirname(dir)) {
      for (const name of places.names) {
        const path = join(dir, name);
        if ((await lstat(path).catch(() => undefined))?.isFIFO() === true) released += await releaseFifo(path);
      }
      if (dir === dirname(dir)) break;
    }
  }
  const directories = [places.tree];
  for (let dir = directories.pop(); dir !== undefined; dir = directories.pop()) {
    const entries = await readdir(dir, { withFileTypes: true }).catch(() => []);
    for (const entry of entries) {
      const path = join(dir, entry.name);
      if (entry.isDirectory() && entry.name !== '.git') directories.push(path);
      else if (entry.isFIFO() && places.names.has(entry.name)) released += await releaseFifo(path);
    }
  }
  return released;
}

async function releaseFifo(path: string): Promise<number> {
  // O_NONBLOCK: without a reader waiting the open fails (ENXIO), and a file that is no FIFO is
  // opened and closed unwritten. O_NOFOLLOW: a link is never followed out.
  const handle = await open(path, constants.O_WRONLY | constants.O_NONBLOCK | constants.O_NOFOLLOW).catch(() => undefined);
  if (handle === undefined) return 0;
  await handle.close();
  return 1;
}
