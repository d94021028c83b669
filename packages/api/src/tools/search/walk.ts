import type { Dirent } from 'node:fs';
import { lstat, readdir } from 'node:fs/promises';
import { DEFAULT_IGNORED_DIRS } from './backend.js';
import { childPath, isIgnored, loadDirectoryRules, loadParentRules, RuleBudget, ruleEntriesAmong, type RuleChain } from './ignore-files.js';
import { TimeSlice } from '../../util/time-slice.js';

const ignoredDirNames = new Set(DEFAULT_IGNORED_DIRS);

type EntryKind = 'file' | 'dir' | 'other';

/** The entry's kind from the directory listing, or undefined when the file system did not say (DT_UNKNOWN). */
function listedKind(entry: Dirent): EntryKind | undefined {
  if (entry.isFile()) return 'file';
  if (entry.isDirectory()) return 'dir';
  if (entry.isSymbolicLink() || entry.isFIFO() || entry.isSocket() || entry.isBlockDevice() || entry.isCharacterDevice()) return 'other';
  return undefined;
}

async function askedKind(path: string): Promise<EntryKind> {
  const stats = await lstat(path).catch(() => undefined);
  if (stats?.isFile()) return 'file';
  if (stats?.isDirectory()) return 'dir';
  return 'other';
}

async function visit(dir: string, parents: RuleChain, budget: RuleBudget, onFile: (path: string) => void, signal: AbortSignal): Promise<void> {
  signal.throwIfAborted();
  let entries: Dirent[];
  try {
    entries = await readdir(dir, { withFileTypes: true });
  } catch {
    return; // unreadable directories are skipped, as ripgrep does with --no-messages
  }
  // The listing says which ignore files there are: none is looked for in vain.
  const chain = [await loadDirectoryRules(dir, budget, ruleEntriesAmong(entries)), ...parents];
  const subdirectories: string[] = [];
  // A directory of 100,000 files is judged a slice at a time, so the service answers meanwhile.
  const slice = new TimeSlice();
  for (const entry of entries) {
    if (slice.due()) {
      await slice.pause();
      signal.throwIfAborted();
    }
    const { name } = entry;
    const path = childPath(dir, name);
    const kind = listedKind(entry) ?? (await askedKind(path));
    if (kind === 'dir' && !ignoredDirNames.has(name) && !isIgnored(path, true, chain, name)) subdirectories.push(path);
    else if (kind === 'file' && !isIgnored(path, false, chain, name)) onFile(path);
  }
  await Promise.all(subdirectories.map((subdirectory) => visit(subdirectory, chain, budget, onFile, signal)));
}

/**
 * Calls `onFile` for every regular file below the directory `root` that ripgrep would search (see
 * backend.ts for the rules), in no particular order.
 */
export async function walkFiles(root: string, signal: AbortSignal, onFile: (path: string) => void): Promise<void> {
  const budget = new RuleBudget();
  await visit(root, await loadParentRules(root, budget), budget, onFile, signal);
}
