import { closeSync, constants, existsSync, lstatSync, mkdirSync, openSync, unlinkSync, type Stats } from 'node:fs';

/**
 * Directories held open while the service (unconfined) writes into a tree that sandboxed
 * processes can change: a checkpoint revert, the restore of protected files after a command. A
 * process of the same or a concurrent run may have swapped any directory on a path for a
 * symbolic link to anywhere, and a path handed to the kernel whole would follow it. Here each
 * directory is opened through the descriptor of the one above it (`/proc/self/fd/N/`) with
 * O_NOFOLLOW, so no link is followed on the way, and the caller makes, reads or removes its file
 * through the parent's descriptor: in the very directory that was walked to. The directory calls
 * are synchronous (microseconds each); file content is the caller's business.
 */

const FD_DIR = '/proc/self/fd';
/** Elsewhere (policy-only development on another OS) only the last component is guarded. */
const CAN_PIN = existsSync(FD_DIR);

const DIRECTORY_FLAGS = constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW;

/** A directory on the way was swapped again between the service replacing it and entering it. */
export class PathSwappedError extends Error {
  constructor(readonly path: string) {
    super(`a directory on the way to ${path} was replaced while it was being written (for example by a symbolic link)`);
    this.name = 'PathSwappedError';
  }
}

/** Paths are byte strings (latin1, one character per byte): a name that is not UTF-8 stays as it is. */
const bytes = (path: string): Buffer => Buffer.from(path, 'latin1');

export class HeldDir {
  private constructor(
    private readonly fd: number,
    private readonly path: Buffer,
  ) {}

  /** The top of the walk, by its path (the user's choice, links in it included). */
  static openTop(top: string): HeldDir {
    const path = Buffer.from(top, 'utf8');
    return new HeldDir(openSync(path, constants.O_RDONLY | constants.O_DIRECTORY), path);
  }

  /** `name` inside this directory, as a path that resolves through the held descriptor. */
  entry(name: string): Buffer {
    return CAN_PIN ? Buffer.concat([bytes(`${FD_DIR}/${this.fd}/`), bytes(name)]) : Buffer.concat([this.path, bytes(`/${name}`)]);
  }

  stat(name: string): Stats | undefined {
    try {
      return lstatSync(this.entry(name));
    } catch {
      return undefined;
    }
  }

  /** Removes a file or link standing at `name` (never what a link points at). */
  unlink(name: string): void {
    unlinkSync(this.entry(name));
  }

  /** The directory `name` below this one, or undefined when it is not a directory (missing, a link, a file). */
  enter(name: string): HeldDir | undefined {
    try {
      return new HeldDir(openSync(this.entry(name), DIRECTORY_FLAGS), Buffer.concat([this.path, bytes(`/${name}`)]));
    } catch {
      return undefined;
    }
  }

  close(): void {
    closeSync(this.fd);
  }
}

export type Walked = { dir: HeldDir; name: string } | { missing: boolean };

/**
 * Walks from `top` to the directory holding `path` (relative to it, `/`-separated). With `make`,
 * a directory missing on the way is made and a link or file standing where one stood is removed
 * first (the link only); without, `missing` when a directory on the way is not there, or not a
 * directory. The caller closes the directory it gets.
 */
export function walkToParent(top: string, path: string, make: boolean): Walked {
  const parts = path.split('/');
  const name = parts.pop() ?? '';
  let dir = HeldDir.openTop(top);
  for (const part of parts) {
    let next = dir.enter(part);
    if (!next && make) {
      try {
        const stats = dir.stat(part);
        if (stats && !stats.isDirectory()) dir.unlink(part);
        mkdirSync(dir.entry(part));
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') {
          dir.close();
          throw error;
        }
      }
      next = dir.enter(part);
      if (!next) {
        dir.close();
        throw new PathSwappedError(Buffer.from(path, 'latin1').toString('utf8'));
      }
    }
    if (!next) {
      const missing = dir.stat(part) === undefined;
      dir.close();
      return { missing };
    }
    dir.close();
    dir = next;
  }
  return { dir, name };
}
