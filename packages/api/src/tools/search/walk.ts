import type { Dirent } from 'node:fs';
import { lstat, readdir } from 'node:fs/promises';
import { DEFAULT_IGNORED_DIRS } from './backend.js';
import { childPath, isIgnored, loadDirectoryRules, loadParentRules, type RuleChain } from './ignore-files.js';

const ignoredDirNames = new Set(DEFAULT_IGNORED_DIRS);

type EntryKind = 'file' | 'dir' | 'other';

async function kindOf(entry: Dirent, path: string): Promise<EntryKind> {
  if (entry.isSymbolicLink()) return 'other';
  if (entry.isFile()) return 'file';
  if (entry.isDirectory()) return 'dir';
  if (!entry.isFIFO() && !entry.isSocket() && !entry.isBlockDevice() && !entry.isCharacterDevice()) {
    // The file system did not say (DT_UNKNOWN): ask.
    const stats = await lstat(path).catch(() => undefined);
    if (stats?.isFile()) return 'file';
    if (stats?.isDirectory()) return 'dir';
  }
  return 'other';
}

async function visit(dir: string, parents: RuleChain, onFile: (path: string) => void, signal: AbortSignal): Promise<void> {
  signal.throwIfAborted();
  const chain = [await loadDirectoryRules(dir), ...parents];
  let entries: Dirent[];
  try {
    entries = await readdir(dir, { withFileTypes: true });
  } catch {
    return; // unreadable directories are skipped, as ripgrep does with --no-messages
  }
  const subdirectories: string[] = [];
  for (const entry of entries) {
    const path = childPath(dir, entry.name);
    const kind = await kindOf(entry, path);
    if (kind === 'dir' && !ignoredDirNames.has(entry.name) && !isIgnored(path, true, chain)) subdirectories.push(path);
    else if (kind === 'file' && !isIgnored(path, false, chain)) onFile(path);
  }
  await Promise.all(subdirectories.map((subdirectory) => visit(subdirectory, chain, onFile, signal)));
}

/**
 * Calls `onFile` for every regular file below the directory `root` that ripgrep would search (see
 * backend.ts for the rules), in no particular order.
 */
export async function walkFiles(root: string, signal: AbortSignal, onFile: (path: string) => void): Promise<void> {
  await visit(root, await loadParentRules(root), onFile, signal);
}
