import { randomBytes } from 'node:crypto';
import { closeSync, constants, existsSync, fchmodSync, lstatSync, mkdirSync, openSync, renameSync, rmSync, unlinkSync, writeSync, type Stats } from 'node:fs';

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

/** What renameOver needs of node:fs (the sandboxed revert program hands it its own). */
export interface RenameFs {
  renameSync(from: Buffer, to: Buffer): void;
  rmSync(path: Buffer, options: { recursive?: boolean; force?: boolean }): void;
  lstatSync(path: Buffer): { isDirectory(): boolean };
}

/**
 * Puts a new entry at `target` without a moment where it is missing: `make` creates it at
 * `temporary` (a fresh name in the same directory), which is then renamed over `target`. A file
 * removed and made again is missing meanwhile: another command's snapshot taken then finds it
 * absent, and its own restore deletes it. Only a directory standing at `target` (which a rename
 * cannot replace) is removed first. The temporary is removed if anything fails.
 *
 * Self-contained, using only its arguments: the sandboxed revert program (restore-program.ts),
 * which sees none of the service's files, carries its source.
 */
export function renameOver(fs: RenameFs, temporary: Buffer, target: Buffer, make: (temporary: Buffer) => void): void {
  make(temporary);
  try {
    try {
      fs.renameSync(temporary, target);
    } catch (error) {
      let directory = false;
      try {
        directory = fs.lstatSync(target).isDirectory();
      } catch {
        directory = false;
      }
      if (!directory) throw error;
      fs.rmSync(target, { recursive: true, force: true });
      fs.renameSync(temporary, target);
    }
  } catch (error) {
    fs.rmSync(temporary, { force: true });
    throw error;
  }
}

/**
 * The temporary names replaceEntry writes under, beside the target: the guards skip them in a
 * directory they walk (`hooks`), as git does (it runs a hook only by its exact name).
 */
export const TEMPORARY_PREFIX = '.mada-put-back-';

/** A fresh temporary name for renameOver. */
export const temporaryName = (): string => `${TEMPORARY_PREFIX}${randomBytes(8).toString('hex')}`;

/** renameOver for `name` in a held directory. */
export function replaceEntry(dir: HeldDir, name: string, make: (temporary: Buffer) => void): void {
  renameOver({ renameSync, rmSync, lstatSync }, dir.entry(temporaryName()), dir.entry(name), make);
}

/** A new file (never one a link or a planted name leads to) with `content` and `mode`. */
export function writeNewFile(path: Buffer, content: Buffer, mode: number): void {
  const fd = openSync(path, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o600);
  try {
    for (let written = 0; written < content.length; ) written += writeSync(fd, content, written, content.length - written);
    fchmodSync(fd, mode);
  } finally {
    closeSync(fd);
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
