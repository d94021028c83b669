import { lstatSync, realpathSync } from 'node:fs';
import { dirname, isAbsolute, join, relative, sep } from 'node:path';

/** A path outside every allowed root; the message is what the agent reads. */
export class PathOutsideError extends Error {
  constructor(readonly path: string) {
    super(`Path outside allowed paths: ${path}`);
    this.name = 'PathOutsideError';
  }
}

/**
 * Resolves a path the way the kernel will when a tool opens it: one component at a time,
 * following a symlink as soon as it is met, so `..` after a link climbs from the link's target
 * (`link/../x` with `link -> /etc/ssl` is `/etc/x`), never from the link's name. A path that does
 * not exist yet resolves its existing part and appends the rest, so a symlinked parent cannot
 * smuggle a new file out of the sandbox. Anything that cannot be judged fails closed.
 */
export function resolveReal(path: string): string {
  const parts = (isAbsolute(path) ? path : `${process.cwd()}/${path}`).split('/').filter((part) => part !== '' && part !== '.');
  let current = '/';
  for (const [index, part] of parts.entries()) {
    if (part === '..') {
      current = dirname(current);
      continue;
    }
    const next = join(current, part);
    let isLink: boolean;
    try {
      isLink = lstatSync(next).isSymbolicLink();
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code !== 'ENOENT' && code !== 'ENOTDIR') throw new PathOutsideError(path);
      const rest = parts.slice(index);
      // `missing/..` cannot be judged without the directory: the kernel would refuse it too.
      if (rest.includes('..')) throw new PathOutsideError(path);
      return join(current, ...rest);
    }
    try {
      current = isLink ? realpathSync.native(next) : next;
    } catch {
      throw new PathOutsideError(path);
    }
  }
  return current;
}

export function isWithin(root: string, candidate: string): boolean {
  if (candidate === root) return true;
  const rel = relative(root, candidate);
  return rel !== '' && !rel.startsWith(`..${sep}`) && rel !== '..' && !isAbsolute(rel);
}

/** The allowed roots (already absolute and symlink-free, as settings.ts makes them). */
export class PathSandbox {
  readonly roots: readonly string[];
  /** Files no tool may write although they lie inside a root: the service's own `.env`. */
  readonly protectedFiles: readonly string[];

  constructor(roots: readonly string[], protectedFiles: readonly string[] = []) {
    if (roots.length === 0) throw new Error('PathSandbox needs at least one root');
    this.roots = roots.map((root) => resolveReal(root));
    this.protectedFiles = protectedFiles.map((file) => resolveReal(file));
  }

  /**
   * Whether `realPath` is a protected file: writing the service's `.env` would change its
   * settings, ALLOWED_PATHS included, at the next start.
   */
  isProtectedFile(realPath: string): boolean {
    return this.protectedFiles.includes(realPath);
  }

  contains(realPath: string): boolean {
    return this.roots.some((root) => isWithin(root, realPath));
  }

  /**
   * The real path of `path` (relative paths taken from `base`), or PathOutsideError.
   * `base` must itself be a real path inside the sandbox.
   */
  resolve(path: string, base: string): string {
    // Joined as text, not path.resolve(): that would apply `..` before the links are followed.
    const real = resolveReal(isAbsolute(path) ? path : `${base}/${path}`);
    if (!this.contains(real)) throw new PathOutsideError(path);
    return real;
  }
}
