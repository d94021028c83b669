import { mkdtempSync, readlinkSync, rmSync } from 'node:fs';
import { lstat, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { processEnded } from './pid-alive.js';

/**
 * One temporary directory per service process, for the files it stages once and keeps for its
 * whole life (the sandbox's /etc, its resolv.conf). It is removed when the process exits; a
 * process that cannot run its exit hooks (SIGKILL, the OOM killer, a crash of the runtime) leaves
 * it behind, so the next process to make its own removes those of processes that are gone.
 *
 * The name holds the pid namespace and the pid, `mada-process-<namespace>-<pid>-XXXXXX`: a pid
 * means nothing in another namespace (a container sharing this temp directory), so only the
 * directories of this namespace are ever judged by their pid.
 */

const PREFIX = 'mada-process-';
const NAME = /^mada-process-(\d+)-(\d+)-[A-Za-z0-9]{6}$/;

/** This process's pid namespace (its inode number), or 0 where /proc does not say. */
function pidNamespace(): string {
  try {
    return /^pid:\[(\d+)\]$/.exec(readlinkSync('/proc/self/ns/pid'))?.[1] ?? '0';
  } catch {
    return '0';
  }
}

let own: string | undefined;

/** This process's directory, made on first use (and the stale ones of ended processes swept then). */
export function processDir(): string {
  if (own !== undefined) return own;
  own = mkdtempSync(join(tmpdir(), `${PREFIX}${pidNamespace()}-${process.pid}-`));
  process.once('exit', removeProcessDir);
  // Not awaited: nothing here depends on it, and it must not fail what asked for the directory.
  void sweepProcessDirs(tmpdir()).catch(() => {});
  return own;
}

/**
 * Removes this process's directory now, for a process done with what it holds: at exit, and at
 * the end of a test file (its worker is killed rather than exited, and a staged /etc takes longer
 * to remove on a busy machine than the runner waits for a worker to end).
 */
export function removeProcessDir(): void {
  if (own === undefined) return;
  rmSync(own, { recursive: true, force: true, maxRetries: 3 });
  own = undefined;
}

/**
 * Removes from `root` the process directories of this pid namespace whose process has ended (a
 * zombie included).
 * Only real directories of this account: a link or another account's entry of the same name in
 * a shared temp directory is not ours to follow or remove. A pid taken again by a newer process
 * keeps the old directory until a later sweep finds that one gone too.
 */
export async function sweepProcessDirs(root: string): Promise<string[]> {
  const namespace = pidNamespace();
  const removed: string[] = [];
  for (const name of await readdir(root)) {
    const match = NAME.exec(name);
    if (match === null || match[1] !== namespace) continue;
    const pid = Number(match[2]);
    if (pid === process.pid || !processEnded(pid)) continue;
    const path = join(root, name);
    try {
      const stats = await lstat(path);
      if (!stats.isDirectory() || stats.uid !== process.getuid?.()) continue;
      await rm(path, { recursive: true, force: true });
      removed.push(path);
    } catch {
      // Removed meanwhile (by another sweep), or not ours after all.
    }
  }
  return removed;
}
