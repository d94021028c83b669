import { isUtf8 } from 'node:buffer';
import { lstatSync, readdirSync, statSync } from 'node:fs';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import { bytePath, fsPath, pathBytes } from '../../util/byte-path.js';
import { readRegularFilePrefixSync } from '../../util/regular-file.js';
import { isWithin } from './paths.js';

/*
 * Every path here is a byte string (util/byte-path.ts), as in the repository census: a `gitdir:`
 * file may name a directory whose name is not UTF-8, and a submodule or worktree may be named so;
 * as text such a path names nothing, and that repository's config and hooks were not protected.
 * The working directory and the allowed roots come in as text and are turned into bytes once.
 */

const isFile = (path: string): boolean => {
  try {
    return lstatSync(fsPath(path)).isFile();
  } catch {
    return false;
  }
};

const isDirectory = (path: string): boolean => {
  try {
    return statSync(fsPath(path)).isDirectory();
  } catch {
    return false;
  }
};

/**
 * A `.git` file or a `commondir` names a directory: a path fits in the first bytes, and reading only
 * those (without blocking, only from a regular file) costs the same for one padded to gigabytes
 * or swapped for a FIFO after the lstat. Read as bytes: the path it names is a byte string too.
 */
const LINK_FILE_BYTES = 4096;
const readLinkFile = (path: string): string => readRegularFilePrefixSync(pathBytes(path), LINK_FILE_BYTES)?.toString('latin1') ?? '';

const ASCII_SPACE = new Set([' ', '\t', '\n', '\r', '\v', '\f']);

/**
 * `text` less ASCII white space at both ends, by index (linear). Not String.trim: on a byte string
 * it would also strip byte 0xA0 (U+00A0 to it), which may end a name that is not UTF-8.
 */
function trimAscii(text: string): string {
  let start = 0;
  let end = text.length;
  while (start < end && ASCII_SPACE.has(text[start] as string)) start++;
  while (end > start && ASCII_SPACE.has(text[end - 1] as string)) end--;
  return text.slice(start, end);
}

/** The path of the first `gitdir:` line, found with string operations (a `\s*` regex backtracked on padding). */
function gitdirLine(text: string): string | undefined {
  for (const line of text.split('\n')) {
    const trimmed = trimAscii(line);
    if (!trimmed.startsWith('gitdir:')) continue;
    const path = trimAscii(trimmed.slice('gitdir:'.length));
    if (path !== '') return path;
  }
  return undefined;
}

/** The repository directory a `.git` entry names: itself, or the target of a `gitdir:` file. */
function gitDirectoryOf(dotGit: string): string | undefined {
  if (isDirectory(dotGit)) return dotGit;
  if (!isFile(dotGit)) return undefined;
  const named = gitdirLine(readLinkFile(dotGit));
  if (named === undefined) return undefined;
  const target = isAbsolute(named) ? named : resolve(dirname(dotGit), named);
  return isDirectory(target) ? target : undefined;
}

/** The repository a `commondir` file points at (worktrees share its config and hooks). */
function commonDirectoryOf(gitDir: string): string | undefined {
  const file = join(gitDir, 'commondir');
  if (!isFile(file)) return undefined;
  const text = trimAscii(readLinkFile(file));
  const target = isAbsolute(text) ? text : resolve(gitDir, text);
  return isDirectory(target) ? target : undefined;
}

const PER_REPOSITORY = ['config', 'config.worktree', 'commondir', 'hooks'];
/** Submodule repositories below `.git/modules`, and linked worktrees: each has its own config and hooks. */
const NESTED = ['modules', 'worktrees'];
const MAX_NESTED_DEPTH = 4;

function repositoryFiles(gitDir: string, depth = 0): string[] {
  const found = PER_REPOSITORY.map((name) => join(gitDir, name));
  if (depth >= MAX_NESTED_DEPTH) return found;
  for (const nested of NESTED) {
    let names: string[] = [];
    try {
      names = readdirSync(pathBytes(join(gitDir, nested)), { encoding: 'buffer' }).map((name) => name.toString('latin1'));
    } catch {
      continue;
    }
    for (const name of names) {
      const dir = join(gitDir, nested, name);
      if (isDirectory(dir)) found.push(...repositoryFiles(dir, depth + 1));
    }
  }
  return found;
}

/** Work trees a command can reach git through: the working directory up to its allowed root, and each root (byte strings). */
function workTrees(cwd: string, roots: readonly string[]): string[] {
  const found = new Set<string>();
  const root = roots.find((r) => isWithin(r, cwd));
  for (let dir = cwd; root !== undefined && isWithin(root, dir); dir = dirname(dir)) {
    found.add(bytePath(dir));
    if (dir === root) break;
  }
  for (const r of roots) found.add(bytePath(r));
  return [...found];
}

/** A repository a command run in `cwd` reaches: the work tree and its git directory. */
export interface RepositoryAround {
  tree: string;
  gitDir: string;
}

/**
 * The repositories around a command run in `cwd`, as byte strings: each work tree up to its allowed
 * root (and each root) with a `.git` directory or `gitdir:` file, and a bare repository (a
 * directory holding `HEAD`, `config` and `objects`) standing there.
 */
function repositoryBytesAround(cwd: string, roots: readonly string[]): RepositoryAround[] {
  const found: RepositoryAround[] = [];
  for (const tree of workTrees(cwd, roots)) {
    const own = gitDirectoryOf(join(tree, '.git'));
    if (own !== undefined) found.push({ tree, gitDir: own });
    if (isFile(join(tree, 'HEAD')) && isDirectory(join(tree, 'objects'))) found.push({ tree, gitDir: tree });
  }
  return found;
}

/** A byte string as text when it is UTF-8 (what a text API can name), else undefined. */
const asText = (path: string): string | undefined => {
  const bytes = pathBytes(path);
  return isUtf8(bytes) ? bytes.toString('utf8') : undefined;
};

/**
 * The repositories around a command run in `cwd`, as byte strings, for the gitlink guard: a git
 * directory whose path is not UTF-8 has its index watched as any other.
 */
export const repositoriesAround = (cwd: string, roots: readonly string[]): RepositoryAround[] => repositoryBytesAround(cwd, roots);

/**
 * The protected git paths a command run in `cwd` could change or make git obey, as byte strings:
 * for each repository around it (a `.git` directory, a `gitdir:` file, the repository its
 * `commondir` names, submodules and worktrees), `config`, `config.worktree`, `commondir` and
 * `hooks`; and `.gitmodules`. Paths that do not exist yet are listed: creating them is a change.
 */
export function protectedGitPathBytes(cwd: string, roots: readonly string[]): string[] {
  const paths = new Set<string>();
  for (const tree of workTrees(cwd, roots)) paths.add(join(tree, '.gitmodules'));
  for (const { gitDir } of repositoryBytesAround(cwd, roots)) {
    for (const path of repositoryFiles(gitDir)) paths.add(path);
    const common = commonDirectoryOf(gitDir);
    if (common !== undefined) for (const path of repositoryFiles(common)) paths.add(path);
  }
  return [...paths].sort();
}

/**
 * protectedGitPathBytes as text, for what takes text paths: bubblewrap's read-only binds (its
 * arguments are text) and the file tools. A path that is not UTF-8 cannot be bound: it is compared
 * after the command and put back (ProtectedSnapshot takes the bytes).
 */
export const protectedGitPaths = (cwd: string, roots: readonly string[]): string[] => protectedGitPathBytes(cwd, roots).flatMap((path) => asText(path) ?? []);
