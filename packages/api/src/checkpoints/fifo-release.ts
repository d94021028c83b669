import { constants } from 'node:fs';
import { open, readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';

/*
 * git opens the work tree's `.gitignore` and `.gitattributes` files without looking at what they
 * are, and opening a FIFO for reading waits for a writer: one planted by a run's `bash` (or an
 * extracted archive) would hold every snapshot of the working directory until its timeout, so no
 * run there could be undone. While a shadow git waits so, the service opens those FIFOs for
 * writing and closes them again: git reads an empty file and goes on. Nothing is paid while git
 * does not wait on a FIFO.
 */

/** The names git reads in a work tree. */
const GIT_READS = new Set(['.gitignore', '.gitattributes', '.gitmodules']);
/** How often a running shadow git is looked at. */
export const FIFO_CHECK_MS = 500;

/**
 * Whether the process may be waiting to open a FIFO: the kernel says `wait_for_partner`, or hides
 * where it waits (`0`) while the process sleeps. A git busy reading files is left alone.
 */
export async function waitsOnFifo(pid: number): Promise<boolean> {
  const wchan = await readFile(`/proc/${pid}/wchan`, 'utf8').catch(() => undefined);
  if (wchan === 'wait_for_partner') return true;
  if (wchan !== '0' && wchan !== '') return false;
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => '');
  // The state follows the command name in parentheses, which may itself hold a parenthesis.
  return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) === 'S';
}

/** Opens each FIFO named like a file git reads below `workTree` for writing, and closes it at once. */
export async function releaseGitFifos(workTree: string): Promise<number> {
  let released = 0;
  const directories = [workTree];
  for (let dir = directories.pop(); dir !== undefined; dir = directories.pop()) {
    const entries = await readdir(dir, { withFileTypes: true }).catch(() => []);
    for (const entry of entries) {
      const path = join(dir, entry.name);
      if (entry.isDirectory() && entry.name !== '.git') directories.push(path);
      else if (entry.isFIFO() && GIT_READS.has(entry.name)) released += await releaseFifo(path);
    }
  }
  return released;
}

async function releaseFifo(path: string): Promise<number> {
  // Without a reader waiting the open fails (ENXIO): nobody is held, and nothing is written.
  const handle = await open(path, constants.O_WRONLY | constants.O_NONBLOCK | constants.O_NOFOLLOW).catch(() => undefined);
  if (handle === undefined) return 0;
  await handle.close();
  return 1;
}
