import { lstatSync, realpathSync, statSync } from 'node:fs';
import { dirname, isAbsolute, join, relative, sep } from 'node:path';

/** A path outside every allowed root; the message is what the agent reads. */
export class PathOutsideError extends Error {
  constructor(
    readonly path: string,
    message = `Path outside allowed paths: ${path}`,
  ) {
    super(message);
    this.name = 'PathOutsideError';
  }
}

/** A path inside an allowed root that no tool may see: the service's data directory or `.env`. */
export class PathHiddenError extends PathOutsideError {
  constructor(path: string) {
    super(path, `Path not allowed: ${path} (the service's own data and settings are hidden from tools)`);
    this.name = 'PathHiddenError';
  }
}

export interface Identity {
  dev: number;
  ino: number;
}

const identityOf = (path: string): Identity | undefined => {
  try {
    const stats = statSync(path);
    return stats.isFile() ? { dev: stats.dev, ino: stats.ino } : undefined;
  } catch {
    return undefined;
  }
};

/**
 * Resolves a path the way the kernel will when a tool opens it: one component at a time,
 * following a symlink as soon as it is met, so `..` after a link climbs from the link's target
 * (`link/../x` with `link -> /etc/ssl` is `/etc/x`), never from the link's name. A path that does
 * not exist yet resolves its existing part and appends the rest, so a symlinked parent cannot
 * smuggle a new file out of the sandbox. Anything that cannot be judged fails closed.
 *
 * `mayLook` says which paths the walk may look at: one it may not ends the walk with
 * PathOutsideError before anything is asked of the file system, so whether something exists there
 * (`x/..` climbs back only when x exists) never shows in the answer.
 */
export function resolveReal(path: string, mayLook: (path: string) => boolean = () => true): string {
  const parts = (isAbsolute(path) ? path : `${process.cwd()}/${path}`).split('/').filter((part) => part !== '' && part !== '.');
  let current = '/';
  for (const [index, part] of parts.entries()) {
    if (part === '..') {
      current = dirname(current);
      continue;
    }
    const next = join(current, part);
    if (!mayLook(next)) throw new PathOutsideError(path);
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
    // Where a link leads is as much a secret as what lies there: `link/..` climbs from it.
    if (isLink && !mayLook(current)) throw new PathOutsideError(path);
  }
  return current;
}

const SLASH = 0x2f;

/** A `//`, or a `.` or `..` segment: a path path.resolve would rewrite. */
const UNNORMALIZED = /\/\/|\/\.\.?(?:\/|$)/;

/** Absolute and already as path.resolve would give it, so that comparing text compares paths. */
const isNormalAbsolute = (path: string): boolean => path.startsWith('/') && (path.length === 1 || (!path.endsWith('/') && !UNNORMALIZED.test(path)));

/**
 * isWithin for two normalized absolute paths: a comparison of text, from the end of `root`, where
 * paths side by side in one directory differ first (startsWith took ten times longer on the
 * substrings a search's output is split into).
 */
function normalWithin(root: string, candidate: string): boolean {
  if (candidate === root || root === '/') return true;
  if (candidate.length <= root.length || candidate.charCodeAt(root.length) !== SLASH) return false;
  for (let i = root.length - 1; i >= 0; i--) if (candidate.charCodeAt(i) !== root.charCodeAt(i)) return false;
  return true;
}

export function isWithin(root: string, candidate: string): boolean {
  if (candidate === root) return true;
  // Searches ask this of every file they list; `relative` resolves both paths each time.
  if (isNormalAbsolute(root) && isNormalAbsolute(candidate)) return normalWithin(root, candidate);
  const rel = relative(root, candidate);
  return rel !== '' && !rel.startsWith(`..${sep}`) && rel !== '..' && !isAbsolute(rel);
}

/** Whether a path is within any of `roots`, for many paths: each path's form is looked at once. */
export function withinAny(roots: readonly string[]): (candidate: string) => boolean {
  if (!roots.every(isNormalAbsolute)) return (candidate) => roots.some((root) => isWithin(root, candidate));
  return (candidate) => (isNormalAbsolute(candidate) ? roots.some((root) => normalWithin(root, candidate)) : roots.some((root) => isWithin(root, candidate)));
}

/** Whether `path` is a directory, symbolic links followed; false when it is missing or cannot be read. */
export function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

/**
 * A regular file with other names (hard links, `cp --link`): writing it in place changes the file
 * under each of them, wherever they are. False when it does not exist or cannot be read.
 */
export function hasOtherNames(real: string): boolean {
  try {
    const stats = lstatSync(real, { throwIfNoEntry: false });
    return stats !== undefined && stats.isFile() && stats.nlink > 1;
  } catch {
    return false;
  }
}

/** The allowed roots (already absolute and symlink-free, as settings.ts makes them). */
export class PathSandbox {
  readonly roots: readonly string[];
  /** Files no tool may write although they lie inside a root: the service's own `.env`. */
  readonly protectedFiles: readonly string[];
  /**
   * Paths no tool may read, list or write although they may lie inside a root: DATA_DIR (the
   * database, checkpoints) and the service's `.env`. Everything below a hidden directory is hidden.
   */
  readonly hiddenPaths: readonly string[];

  constructor(roots: readonly string[], protectedFiles: readonly string[] = [], hiddenPaths: readonly string[] = []) {
    if (roots.length === 0) throw new Error('PathSandbox needs at least one root');
    this.roots = roots.map((root) => resolveReal(root));
    this.protectedFiles = protectedFiles.map((file) => resolveReal(file));
    this.hiddenPaths = [...new Set(hiddenPaths.map((path) => resolveReal(path)))];
  }

  /**
   * Whether `realPath` is hidden: below a hidden path, or another name (a hard link) of a hidden
   * file, which a path comparison alone would miss.
   */
  isHidden(realPath: string): boolean {
    return this.hiddenFilter()(realPath);
  }

  /**
   * isHidden for the many paths of one search. The hidden files' identities are taken once, not
   * once per path, and a path's own is looked up only when there is a hidden file to compare it
   * with: `stats` is the path's stat when the caller took one already (a regular file's lstat).
   */
  hiddenFilter(): (realPath: string, stats?: Identity) => boolean {
    const identities = this.hiddenPaths.map(identityOf).filter((identity) => identity !== undefined);
    const belowHidden = withinAny(this.hiddenPaths);
    return (realPath, stats) => {
      if (belowHidden(realPath)) return true;
      if (identities.length === 0) return false;
      const candidate = stats ?? identityOf(realPath);
      return candidate !== undefined && identities.some((identity) => identity.dev === candidate.dev && identity.ino === candidate.ino);
    };
  }

  /**
   * Whether `realPath` is a protected file: writing the service's `.env` would change its
   * settings, ALLOWED_PATHS included, at the next start.
   */
  isProtectedFile(realPath: string): boolean {
    return this.protectedFiles.includes(realPath);
  }

  /**
   * What resolve() may look at on its way: what lies inside a root, and a root's ancestors (the
   * way to it). Anything else may be someone else's (another user's workspace): a path that only
   * passes through it and climbs back (`/w/alice/notes/../../bob`) would otherwise resolve when it
   * exists there and be refused when not, telling what she has.
   */
  private readonly visible = (path: string): boolean => this.roots.some((root) => isWithin(root, path) || isWithin(path, root));

  /**
   * The real path of the absolute `path`, walked as resolve() walks it but allowed to end on the
   * way to a root (a glob's `..` climbs there before it comes back down): PathOutsideError as soon
   * as it would look anywhere else.
   */
  walk(path: string): string {
    return resolveReal(path, this.visible);
  }

  /** Inside a root and not hidden. */
  contains(realPath: string): boolean {
    return this.roots.some((root) => isWithin(root, realPath)) && !this.isHidden(realPath);
  }

  /**
   * The real path of `path` (relative paths taken from `base`), or PathOutsideError.
   * `base` must itself be a real path inside the sandbox.
   */
  resolve(path: string, base: string): string {
    let real: string;
    try {
      // Joined as text, not path.resolve(): that would apply `..` before the links are followed.
      real = resolveReal(isAbsolute(path) ? path : `${base}/${path}`, this.visible);
    } catch (error) {
      // Named as the caller gave it, whichever step refused it.
      if (error instanceof PathOutsideError) throw new PathOutsideError(path);
      throw error;
    }
    if (!this.roots.some((root) => isWithin(root, real))) throw new PathOutsideError(path);
    if (this.isHidden(real)) throw new PathHiddenError(path);
    return real;
  }
}
