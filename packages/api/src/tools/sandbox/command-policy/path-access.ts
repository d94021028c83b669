import { realpathSync } from 'node:fs';
import { dirname, isAbsolute, join, sep } from 'node:path';
import { PathOutsideError, type PathSandbox } from '../paths.js';
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
}

/** Readable and writable whatever the sandbox: they hold no secrets and lead nowhere. Never removable. */
const STANDARD_STREAMS = new Set(['/dev/null', '/dev/stdin', '/dev/stdout', '/dev/stderr']);

/**
 * Resolves a path the way the kernel walks it: one component at a time, each symbolic link
 * followed before a later `..` is applied (`link/../x` is the parent of the link's target, not
 * the directory holding the link). Components that do not exist yet are appended as they are.
 */
export function resolvePhysically(path: string, base: string): string {
  let current = isAbsolute(path) ? '/' : base;
  for (const part of path.split('/')) {
    if (part === '' || part === '.') continue;
    if (part === '..') {
      current = dirname(current);
      continue;
    }
    const next = join(current, part);
    try {
      current = realpathSync(next);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code !== 'ENOENT' && code !== 'ENOTDIR') throw new PathOutsideError(path);
      current = next;
    }
  }
  return current;
}

/** The real path of a path inside the sandbox, checked both by the sandbox and component by component. */
export function resolveInside(path: string, base: string, sandbox: PathSandbox): string {
  sandbox.resolve(path, base);
  const physical = resolvePhysically(path, base);
  if (!sandbox.contains(physical)) throw new PathOutsideError(path);
  return physical;
}

/** The real path of a path argument, or a refusal naming it. */
export function checkPathUse(use: PathUse, cwd: string, sandbox: PathSandbox): string {
  if (STANDARD_STREAMS.has(use.path) && use.access !== 'entry') return use.path;
  const base = use.base === undefined ? cwd : resolveInside(use.base, cwd, sandbox);
  const real = resolveInside(use.path, base, sandbox);
  if (use.access !== 'read' && isProtectedGitPath(real)) refuse(`writing to .git/hooks, .git/config or a .git directory is refused (${use.path})`);
  if (use.access !== 'read' && sandbox.isProtectedFile(real)) refuse(`writing the service's own settings file is refused (${use.path})`);
  return real;
}
