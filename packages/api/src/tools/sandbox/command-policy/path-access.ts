import { readdirSync, readlinkSync, type Dirent } from 'node:fs';
import { dirname, join, resolve, sep } from 'node:path';
import { resolveReal, type PathSandbox } from '../paths.js';
import { isProtectedGitPath } from '../protected-paths.js';
import { refuse } from './refusal.js';

/**
 * read: the program reads the file; write: it writes content into it (creating it if needed);
 * entry: it creates, removes, renames or re-modes the directory entry itself (rm, mv, chmod...).
 */
export type Access = 'read' | 'write' | 'entry';

export interface PathUse {
  path: string;
  access: Access;
  /** Directory the program resolves the path from, when not the working directory (tar -C). */
  base?: string;
  /**
   * A directory the program writes below along paths the command does not name (an archive's
   * members), through whatever symbolic link it meets there.
   */
  below?: boolean;
}

/** Readable and writable whatever the sandbox: they hold no secrets and lead nowhere. Never removable. */
const STANDARD_STREAMS = new Set(['/dev/null', '/dev/stdin', '/dev/stdout', '/dev/stderr']);

export const isStandardStream = (path: string): boolean => STANDARD_STREAMS.has(path);

/** The real path of a path inside the sandbox (PathSandbox resolves component by component). */
export function resolveInside(path: string, base: string, sandbox: PathSandbox): string {
  return sandbox.resolve(path, base);
}

/**
 * Refs, reflogs and the stash are files in `.git`: emptying `.git/logs/refs/stash` clears the
 * stash, overwriting `.git/refs/heads/x` deletes a branch, past the approval rules that ask before
 * `git stash clear` and `git branch -D` (and which see argv, not redirections).
 */
const isInsideGitDirectory = (real: string): boolean => real.split(sep).includes('.git');

/** The real path of a path argument, or a refusal naming it. */
export function checkPathUse(use: PathUse, cwd: string, sandbox: PathSandbox): string {
  if (isStandardStream(use.path) && use.access !== 'entry') return use.path;
  const base = use.base === undefined ? cwd : resolveInside(use.base, cwd, sandbox);
  const real = resolveInside(use.path, base, sandbox);
  if (use.access !== 'read' && isProtectedGitPath(real)) refuse(`writing to .git/hooks, .git/config or a .git directory is refused (${use.path})`);
  if (use.access !== 'read' && isInsideGitDirectory(real)) refuse(`writing inside a .git directory is refused; git's own commands change the repository (${use.path})`);
  if (use.access !== 'read' && sandbox.isProtectedFile(real)) refuse(`writing the service's own settings file is refused (${use.path})`);
  return real;
}

/** Most entries looked through below the directories one command extracts into. */
const MAX_ENTRIES_BELOW = 20_000;

/**
 * Where the symbolic links below `dirs` lead (real paths; a dangling link where it points): tar
 * and unzip write a member `link/x` through a link `link` already there. `.git` is left out, as
 * extractions leave it out. Undefined when the directories hold more than MAX_ENTRIES_BELOW entries.
 */
export function linkTargetsBelow(dirs: readonly string[]): string[] | undefined {
  const targets: string[] = [];
  const pending = [...dirs];
  let seen = 0;
  for (let dir = pending.pop(); dir !== undefined; dir = pending.pop()) {
    let entries: Dirent[];
    try {
      entries = readdirSync(dir, { withFileTypes: true });
    } catch {
      continue;
    }
    seen += entries.length;
    if (seen > MAX_ENTRIES_BELOW) return undefined;
    for (const entry of entries) {
      const path = join(dir, entry.name);
      if (entry.isDirectory() && entry.name !== '.git') pending.push(path);
      else if (entry.isSymbolicLink()) targets.push(linkTarget(path));
    }
  }
  return targets;
}

function linkTarget(link: string): string {
  try {
    return resolveReal(link);
  } catch {
    try {
      return resolve(dirname(link), readlinkSync(link));
    } catch {
      return link;
    }
  }
}
