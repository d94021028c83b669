import { renameSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathBytes } from '../../util/byte-path.js';
import { readRegularFileSync } from '../../util/regular-file.js';
import { configValues } from './git-config-values.js';
import { gitlinksOf, parseIndex, serializeIndex, type GitIndex } from './git-index.js';

/*
 * The gitlink guard's reading and rewriting of a repository's index, run on a worker thread with
 * a heap limit and a deadline (gitlink-guard.ts): every file here is the command's to write, and
 * an index, a config or a `.gitmodules` made to be expensive must cost a thread, never the
 * service's event loop. Paths are byte strings (util/byte-path.ts), handed to the kernel as bytes.
 */

/** An index of millions of entries is this big; beyond it (a sparse file, say) it is not read. */
const MAX_INDEX_BYTES = 256 * 1024 * 1024;
const MAX_SMALL_FILE_BYTES = 1024 * 1024;

export type GitlinkTask =
  /** The gitlinks of `index`, to compare with after the command. */
  | { op: 'read'; gitDir: string; index: string }
  /**
   * Takes out of `index` every gitlink neither in `keep` nor registered in `tree`'s
   * `.gitmodules`, writing the new index to `temporary` (created exclusively) and renaming it over.
   */
  | { op: 'prune'; gitDir: string; index: string; tree: string; keep: string[]; temporary: string };

/** `unreadable`: no index this code can judge (a split or sparse index, garbage, too big). */
export type GitlinkTaskResult = { unreadable: true } | { gitlinks: string[] };

/** Read without blocking and only if regular: a FIFO named `config` cannot stop the thread. */
const readSmall = (path: string): string => readRegularFileSync(pathBytes(path), MAX_SMALL_FILE_BYTES)?.toString('latin1') ?? '';

const hashBytesOf = (gitDir: string): number => (configValues(readSmall(join(gitDir, 'config')), 'objectformat').some((value) => value.toLowerCase() === 'sha256') ? 32 : 20);

function readIndex(gitDir: string, index: string): GitIndex | undefined {
  const data = readRegularFileSync(pathBytes(index), MAX_INDEX_BYTES);
  return data === undefined ? undefined : parseIndex(data, hashBytesOf(gitDir));
}

/** Paths `.gitmodules` registers: the user's submodules, which stay. latin1, as index paths are read. */
const registeredSubmodules = (tree: string): Set<string> => new Set(configValues(readSmall(join(tree, '.gitmodules')), 'path'));

/** The worker's one entry point; `gitlinks` of a prune are the ones it took out. */
export default function gitlinkTask(task: GitlinkTask): GitlinkTaskResult {
  const index = readIndex(task.gitDir, task.index);
  if (index === undefined) return { unreadable: true };
  if (task.op === 'read') return { gitlinks: gitlinksOf(index) };
  const keep = new Set(task.keep);
  const registered = registeredSubmodules(task.tree);
  const added = gitlinksOf(index).filter((path) => !keep.has(path) && !registered.has(path));
  if (added.length === 0) return { gitlinks: [] };
  // A fresh name, created exclusively: a link planted under it must not redirect the write.
  writeFileSync(pathBytes(task.temporary), serializeIndex(index, new Set(added)), { mode: statSync(pathBytes(task.index)).mode & 0o777, flag: 'wx' });
  renameSync(pathBytes(task.temporary), pathBytes(task.index));
  return { gitlinks: added };
}
