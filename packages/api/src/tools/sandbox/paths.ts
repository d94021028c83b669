import { realpathSync } from 'node:fs';
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';

/** A path outside every allowed root; the message is what the agent reads. */
export class PathOutsideError extends Error {
  constructor(readonly path: string) {
    super(`Path outside allowed paths: ${path}`);
    this.name = 'PathOutsideError';
  }
}

/**
 * Resolves a path the way the kernel will when a tool opens it: symlinks followed, `..` applied
 * after each link. For a path that does not exist yet, its deepest existing ancestor is resolved
 * and the rest appended, so a symlinked parent cannot smuggle a new file out of the sandbox.
 */
export function resolveReal(path: string): string {
  const missing: string[] = [];
  let current = resolve(path);
  for (;;) {
    try {
      const real = realpathSync(current);
      return missing.length === 0 ? real : join(real, ...missing.reverse());
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      // ENOENT: not there yet; ENOTDIR: a file used as a directory. Anything else (a loop,
      // no permission) cannot be judged, so it fails closed.
      if (code !== 'ENOENT' && code !== 'ENOTDIR') throw new PathOutsideError(path);
      const parent = dirname(current);
      if (parent === current) throw new PathOutsideError(path);
      missing.push(basename(current));
      current = parent;
    }
  }
}

export function isWithin(root: string, candidate: string): boolean {
  if (candidate === root) return true;
  const rel = relative(root, candidate);
  return rel !== '' && !rel.startsWith(`..${sep}`) && rel !== '..' && !isAbsolute(rel);
}

/** The allowed roots (already absolute and symlink-free, as settings.ts makes them). */
export class PathSandbox {
  readonly roots: readonly string[];

  constructor(roots: readonly string[]) {
    if (roots.length === 0) throw new Error('PathSandbox needs at least one root');
    this.roots = roots.map((root) => resolveReal(root));
  }

  contains(realPath: string): boolean {
    return this.roots.some((root) => isWithin(root, realPath));
  }

  /**
   * The real path of `path` (relative paths taken from `base`), or PathOutsideError.
   * `base` must itself be a real path inside the sandbox.
   */
  resolve(path: string, base: string): string {
    const real = resolveReal(isAbsolute(path) ? path : resolve(base, path));
    if (!this.contains(real)) throw new PathOutsideError(path);
    return real;
  }
}
