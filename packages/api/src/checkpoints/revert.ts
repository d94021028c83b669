import { chmod, lstat, mkdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { nulFields } from './git.js';
import type { ShadowRepo } from './shadow-repo.js';

/** A file as a snapshot holds it: git mode (100644, 100755) and blob id. */
interface Entry {
  mode: string;
  blob: string;
}

type State = Entry | undefined;

async function treeEntries(repo: ShadowRepo, tree: string, paths: readonly string[]): Promise<Map<string, Entry>> {
  const entries = new Map<string, Entry>();
  if (paths.length === 0) return entries;
  const { stdout } = await repo.git(['ls-tree', '-r', '-z', '--full-tree', tree, '--', ...paths.map(literal)]);
  for (const record of nulFields(stdout)) {
    const tab = record.indexOf('\t');
    const [mode = '', , blob = ''] = record.slice(0, tab).split(' ');
    entries.set(record.slice(tab + 1), { mode, blob });
  }
  return entries;
}

/** A pathspec that means exactly this path (no wildcards, no magic). */
const literal = (path: string): string => `:(literal)${path}`;

/** The file as it is now in the working directory, in the same terms as a snapshot. */
async function currentStates(repo: ShadowRepo, paths: readonly string[]): Promise<Map<string, State | 'other'>> {
  const states = new Map<string, State | 'other'>();
  const files: string[] = [];
  for (const path of paths) {
    // Below a symlink put where a directory was, the path names another file: not the run's.
    const stats = (await parentsAreDirectories(repo.workingDir, path)) ? await lstat(join(repo.workingDir, path)).catch(() => undefined) : 'other';
    if (stats === 'other') states.set(path, 'other');
    else if (!stats) states.set(path, undefined);
    else if (!stats.isFile()) states.set(path, 'other');
    else {
      files.push(path);
      states.set(path, { mode: stats.mode & 0o111 ? '100755' : '100644', blob: '' });
    }
  }
  if (files.length > 0) {
    const { stdout } = await repo.git(['hash-object', '--no-filters', '--stdin-paths'], { input: files.map((p) => join(repo.workingDir, p)).join('\n') + '\n' });
    const blobs = stdout.toString('utf8').trim().split('\n');
    files.forEach((path, i) => {
      const state = states.get(path) as Entry;
      state.blob = blobs[i] ?? '';
    });
  }
  return states;
}

const sameState = (a: State | 'other', b: State): boolean =>
  a === 'other' ? false : a === undefined || b === undefined ? a === b : a.mode === b.mode && a.blob === b.blob;

/** Paths among `paths` that are no longer as the run left them (its end snapshot). */
export async function changedSinceRun(repo: ShadowRepo, after: string, paths: readonly string[]): Promise<string[]> {
  const [ended, now] = await Promise.all([treeEntries(repo, after, paths), currentStates(repo, paths)]);
  return paths.filter((path) => !sameState(now.get(path), ended.get(path)));
}

/** The directories above `path` (relative, `/`-separated), from the working directory down. */
function parentsOf(workingDir: string, path: string): string[] {
  const parents: string[] = [];
  let dir = workingDir;
  for (const part of path.split('/').slice(0, -1)) {
    dir = join(dir, part);
    parents.push(dir);
  }
  return parents;
}

/** Whether every existing directory above `path` is a real directory (no symlink or file planted in its place). */
async function parentsAreDirectories(workingDir: string, path: string): Promise<boolean> {
  for (const dir of parentsOf(workingDir, path)) {
    const stats = await lstat(dir).catch(() => undefined);
    if (!stats) return true;
    if (!stats.isDirectory()) return false;
  }
  return true;
}

/**
 * Makes the directories above `path` one at a time, never through a link: a symlink or file that
 * now stands where a directory stood is removed (a link only, never what it points at) and a
 * directory made in its place. A recursive mkdir would follow a planted `dir -> /elsewhere` and
 * make directories outside the working directory.
 */
async function makeParents(workingDir: string, path: string): Promise<string> {
  for (const dir of parentsOf(workingDir, path)) {
    const stats = await lstat(dir).catch(() => undefined);
    if (stats?.isDirectory()) continue;
    if (stats) await rm(dir, { force: true });
    await mkdir(dir);
  }
  return join(workingDir, path);
}

/** Puts each path back as the `before` snapshot holds it: content and mode, or removed if it was not there. */
export async function restore(repo: ShadowRepo, before: string, paths: readonly string[]): Promise<void> {
  const entries = await treeEntries(repo, before, paths);
  for (const path of paths) {
    const target = await makeParents(repo.workingDir, path);
    const stats = await lstat(target).catch(() => undefined);
    // A link or file in the way is replaced, never written through.
    if (stats && !stats.isDirectory()) await rm(target, { force: true });
    const entry = entries.get(path);
    if (!entry) continue;
    const { stdout } = await repo.git(['cat-file', 'blob', entry.blob]);
    const mode = restoredMode(stats?.isFile() ? stats.mode & 0o777 : 0o644, entry.mode === '100755');
    await writeFile(target, stdout, { flag: 'wx', mode });
    await chmod(target, mode);
  }
}

/** Snapshots know only the executable bit: the rest of the file's permissions stay as they are. */
function restoredMode(current: number, executable: boolean): number {
  const plain = current & ~0o111;
  return executable ? plain | ((plain & 0o444) >> 2) : plain;
}
