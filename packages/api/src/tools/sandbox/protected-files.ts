import { lstatSync, readdirSync } from 'node:fs';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import { readRegularFilePrefixSync } from '../../util/regular-file.js';
import { isDirectory, isWithin } from './paths.js';


const isFile = (path: string): boolean => {
  try {
    return lstatSync(path).isFile();
  } catch {
    return false;
  }
};

/**
 * A `.git` file or a `commondir` names a directory: a path fits in the first bytes, and reading only
 * those (without blocking, only from a regular file) costs the same for one padded to gigabytes
 * or swapped for a FIFO after the lstat.
 */
const LINK_FILE_BYTES = 4096;
const readLinkFile = (path: string): string => readRegularFilePrefixSync(path, LINK_FILE_BYTES)?.toString('utf8') ?? '';

/** The path of the first `gitdir:` line, found with string operations (a `\s*` regex backtracked on padding). */
function gitdirLine(text: string): string | undefined {
  for (const line of text.split('\n')) {
    const trimmed = line.trimStart();
    if (!trimmed.startsWith('gitdir:')) continue;
    const path = trimmed.slice('gitdir:'.length).trim();
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
  const text = readLinkFile(file).trim();
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
      names = readdirSync(join(gitDir, nested));
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

/** Work trees a command can reach git through: the working directory up to its allowed root, and each root. */
function workTrees(cwd: string, roots: readonly string[]): string[] {
  const found = new Set<string>();
  const root = roots.find((r) => isWithin(r, cwd));
  for (let dir = cwd; root !== undefined && isWithin(root, dir); dir = dirname(dir)) {
    found.add(dir);
    if (dir === root) break;
  }
  for (const r of roots) found.add(r);
  return [...found];
}

/** A repository a command run in `cwd` reaches: the work tree and its git directory. */
export interface RepositoryAround {
  tree: string;
  gitDir: string;
}

/**
 * The repositories around a command run in `cwd`: each work tree up to its allowed root (and each
 * root) with a `.git` directory or `gitdir:` file, and a bare repository (a directory holding
 * `HEAD`, `config` and `objects`) standing there.
 */
export function repositoriesAround(cwd: string, roots: readonly string[]): RepositoryAround[] {
  const found: RepositoryAround[] = [];
  for (const tree of workTrees(cwd, roots)) {
    const own = gitDirectoryOf(join(tree, '.git'));
    if (own !== undefined) found.push({ tree, gitDir: own });
    if (isFile(join(tree, 'HEAD')) && isDirectory(join(tree, 'objects'))) found.push({ tree, gitDir: tree });
  }
  return found;
}

/**
 * The protected git paths a command run in `cwd` could change or make git obey: for each
 * repository around it (a `.git` directory, a `gitdir:` file, the repository its `commondir` names,
 * submodules and worktrees), `config`, `config.worktree`, `commondir` and `hooks`; and `.gitmodules`.
 * Paths that do not exist yet are listed: creating them is a change.
 */
export function protectedGitPaths(cwd: string, roots: readonly string[]): string[] {
  const paths = new Set<string>();
  for (const tree of workTrees(cwd, roots)) paths.add(join(tree, '.gitmodules'));
  for (const { gitDir } of repositoriesAround(cwd, roots)) {
    for (const path of repositoryFiles(gitDir)) paths.add(path);
    const common = commonDirectoryOf(gitDir);
    if (common !== undefined) for (const path of repositoryFiles(common)) paths.add(path);
  }
  return [...paths].sort();
}
