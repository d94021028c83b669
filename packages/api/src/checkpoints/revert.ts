import { constants } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import { PathSwappedError, replaceEntry, walkToParent, writeNewFile } from '../util/held-dir.js';
import { readOpenRegularFile } from '../util/regular-file.js';
import { PathChangedError } from './errors.js';
import { nulFields } from './git.js';
import { objectId } from './loose-store.js';
import type { ShadowRepo } from './shadow-repo.js';

/**
 * Paths here are git's byte strings (latin1, one character per byte): a name that is not UTF-8
 * must reach the file system as the bytes the snapshot holds, or its revert would miss it.
 */

/** A file as a snapshot holds it: git mode (100644, 100755), blob id and size. */
export interface Entry {
  mode: string;
  blob: string;
  size: number;
}

type State = Entry | undefined;

/**
 * The entries of `paths` in `tree`. The whole tree is listed, not asked for by pathspec: a
 * command line carries only UTF-8, and a path need not be.
 */
export async function treeEntries(repo: ShadowRepo, tree: string, paths: readonly string[]): Promise<Map<string, Entry>> {
  const entries = new Map<string, Entry>();
  const wanted = new Set(paths);
  if (wanted.size === 0) return entries;
  const { stdout } = await repo.git(['ls-tree', '-r', '-z', '-l', '--full-tree', tree]);
  for (const record of nulFields(stdout, 'latin1')) {
    const tab = record.indexOf('\t');
    const path = record.slice(tab + 1);
    if (!wanted.has(path)) continue;
    const [mode = '', , blob = '', size = ''] = record.slice(0, tab).split(/ +/);
    entries.set(path, { mode, blob, size: Number(size) });
  }
  return entries;
}

/**
 * The file as it is now in the working directory, in the same terms as a snapshot, hashed by
 * the service from what it opened (a list of paths handed to git would be split at a newline in
 * a name, and each file compared with another's content). Below a link or file put where a
 * directory was, the path names another file: not the run's.
 */
async function currentState(workingDir: string, path: string, ended: State): Promise<State | 'other'> {
  const walked = walkToParent(workingDir, path, false);
  if (!('dir' in walked)) return walked.missing ? undefined : 'other';
  const { dir, name } = walked;
  let handle: FileHandle | undefined;
  try {
    const stats = dir.stat(name);
    if (!stats) return undefined;
    if (!stats.isFile()) return 'other';
    const mode = stats.mode & 0o111 ? '100755' : '100644';
    // Another size is another content: no need to read it.
    if (!ended || stats.size !== ended.size) return { mode, blob: '', size: stats.size };
    // O_NONBLOCK: a FIFO put there since the lstat must not hang the read.
    handle = await open(dir.entry(name), constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK).catch(() => undefined);
    const content = handle && (await readOpenRegularFile(handle, ended.size).catch(() => undefined));
    return content ? { mode, blob: objectId('blob', content), size: content.length } : 'other';
  } finally {
    await handle?.close();
    dir.close();
  }
}

const sameState = (a: State | 'other', b: State): boolean =>
  a === 'other' ? false : a === undefined || b === undefined ? a === b : a.mode === b.mode && a.blob === b.blob;

/**
 * Paths among `paths` that are no longer as the run left them (its end snapshot), below `top`: the
 * run's own working directory, held (working-dir-pin.ts).
 */
export async function changedSinceRun(repo: ShadowRepo, top: string, after: string, paths: readonly string[]): Promise<string[]> {
  const ended = await treeEntries(repo, after, paths);
  const changed: string[] = [];
  for (const path of paths) {
    if (!sameState(await currentState(top, path, ended.get(path)), ended.get(path))) changed.push(path);
  }
  return changed;
}

/**
 * Puts each path back as the `before` snapshot holds it: content and mode, or removed if it was
 * not there. Missing directories are made one at a time and a link or file standing where a
 * directory stood is replaced, all through held directories (held-dir.ts) from `top` (the run's
 * working directory, held), so nothing is made, written or removed outside it even while a
 * directory is being swapped. In the service itself: only when the operator turned the sandbox
 * off (sandboxed-restore.ts does it otherwise, with the same steps).
 */
export async function restore(repo: ShadowRepo, top: string, before: string, paths: readonly string[]): Promise<void> {
  const entries = await treeEntries(repo, before, paths);
  for (const path of paths) {
    const walked = walkOrStop(top, path);
    if (!('dir' in walked)) continue; // never with `make`
    const { dir, name } = walked;
    try {
      const stats = dir.stat(name);
      const entry = entries.get(path);
      if (!entry) {
        if (stats && !stats.isDirectory()) dir.unlink(name);
        continue;
      }
      const { stdout } = await repo.git(['cat-file', 'blob', entry.blob]);
      const mode = restoredMode(stats?.isFile() ? stats.mode & 0o777 : 0o644, entry.mode === '100755');
      // A new file renamed over what stands there (a link or file is replaced, never written
      // through): the path is never missing meanwhile, for a concurrent run's snapshot to see.
      replaceEntry(dir, name, (temporary) => writeNewFile(temporary, stdout, mode));
    } finally {
      dir.close();
    }
  }
}

/** walkToParent making what is missing; a directory swapped again meanwhile stops the revert. */
function walkOrStop(workingDir: string, path: string): ReturnType<typeof walkToParent> {
  try {
    return walkToParent(workingDir, path, true);
  } catch (error) {
    if (error instanceof PathSwappedError) throw new PathChangedError(error.path);
    throw error;
  }
}

/** Snapshots know only the executable bit: the rest of the file's permissions stay as they are. */
export function restoredMode(current: number, executable: boolean): number {
  const plain = current & ~0o111;
  return executable ? plain | ((plain & 0o444) >> 2) : plain;
}
