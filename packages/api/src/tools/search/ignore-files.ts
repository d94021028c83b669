import { access } from 'node:fs/promises';
import { dirname } from 'node:path';
import { setImmediate as yieldToEventLoop } from 'node:timers/promises';
import { readRegularFile } from '../../util/regular-file.js';
import { matchIgnoreRules, parseIgnoreLines, type IgnoreRule, type IgnoreVerdict } from './ignore-rules.js';

/** The ignore files of one directory, by ripgrep's precedence (highest first). */
export interface DirectoryRules {
  dir: string;
  rgignore: IgnoreRule[];
  ignore: IgnoreRule[];
  gitignore: IgnoreRule[];
  /** A `.git` entry here ends the reach of `.gitignore` files further up. */
  hasGit: boolean;
}

/** Directories from a path's own directory up to `/`, deepest first. */
export type RuleChain = readonly DirectoryRules[];

/** Ignore-file lines compiled between two turns of the event loop (a hostile file may hold millions). */
const LINES_PER_SLICE = 2000;
/** Far above any ignore file a project writes; a planted multi-gigabyte one is not read. */
const MAX_IGNORE_FILE_BYTES = 16 * 1024 * 1024;

async function readRules(path: string): Promise<IgnoreRule[]> {
  const bytes = await readRegularFile(path, MAX_IGNORE_FILE_BYTES);
  // Missing or unreadable: ripgrep skips such files silently too. Not a regular file (a FIFO)
  // or larger than any real one: skipped too, where ripgrep would wait or fill memory.
  if (bytes === undefined) return [];
  const lines = bytes.toString('utf8').split('\n');
  const rules: IgnoreRule[] = [];
  for (let start = 0; start < lines.length; start += LINES_PER_SLICE) {
    if (start > 0) await yieldToEventLoop();
    rules.push(...parseIgnoreLines(lines.slice(start, start + LINES_PER_SLICE)));
  }
  return rules;
}

const exists = (path: string): Promise<boolean> =>
  access(path).then(
    () => true,
    () => false,
  );

/** `dir/name`, also for the root directory. */
export const childPath = (dir: string, name: string): string => (dir === '/' ? `/${name}` : `${dir}/${name}`);

export async function loadDirectoryRules(dir: string): Promise<DirectoryRules> {
  const [rgignore, ignore, gitignore, hasGit] = await Promise.all([
    readRules(childPath(dir, '.rgignore')),
    readRules(childPath(dir, '.ignore')),
    readRules(childPath(dir, '.gitignore')),
    exists(childPath(dir, '.git')),
  ]);
  return { dir, rgignore, ignore, gitignore, hasGit };
}

/** The rules of every directory above `root` (ripgrep reads ignore files of parent directories too). */
export async function loadParentRules(root: string): Promise<DirectoryRules[]> {
  const chain: DirectoryRules[] = [];
  if (root === dirname(root)) return chain;
  for (let dir = dirname(root); ; dir = dirname(dir)) {
    chain.push(await loadDirectoryRules(dir));
    if (dir === dirname(dir)) return chain;
  }
}

const relativeTo = (dir: string, path: string): string => (dir === '/' ? path.slice(1) : path.slice(dir.length + 1));

/**
 * ripgrep's verdict for `path`: per kind of ignore file the deepest matching file decides, and the
 * kinds rank `.rgignore` over `.ignore` over `.gitignore`, whatever their depth. `.gitignore` files
 * above the nearest directory holding `.git` do not count.
 */
export function isIgnored(path: string, isDir: boolean, chain: RuleChain): boolean {
  let rgignore: IgnoreVerdict;
  let ignore: IgnoreVerdict;
  let gitignore: IgnoreVerdict;
  let sawGit = false;
  for (const level of chain) {
    const relative = relativeTo(level.dir, path);
    rgignore ??= matchIgnoreRules(level.rgignore, relative, isDir);
    ignore ??= matchIgnoreRules(level.ignore, relative, isDir);
    if (!sawGit) gitignore ??= matchIgnoreRules(level.gitignore, relative, isDir);
    sawGit ||= level.hasGit;
  }
  return (rgignore ?? ignore ?? gitignore) === 'ignore';
}

