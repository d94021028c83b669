import { constants, existsSync } from 'node:fs';
import { lstat, mkdir, open, unlink, type FileHandle } from 'node:fs/promises';
import type { Stats } from 'node:fs';
import { PathChangedError } from './errors.js';

/**
 * Directories of a working directory held open while a revert reads or writes in them. The
 * revert runs in the service, unconfined, while a concurrent run's `bash` may swap any directory
 * on a path for a symbolic link to anywhere; a path handed to the kernel whole would follow it.
 * Here each directory is opened through the descriptor of the one above it (`/proc/self/fd/N/`)
 * with O_NOFOLLOW, so no link is ever followed on the way, and the file is made, read or removed
 * through its parent's descriptor: in the very directory that was walked to. Paths are git's
 * byte strings (latin1, one character per byte), so a name that is not UTF-8 is kept as it is.
 */

const FD_DIR = '/proc/self/fd';
/** Elsewhere (policy-only development on another OS) only the last component is guarded. */
const CAN_PIN = existsSync(FD_DIR);

const DIRECTORY_FLAGS = constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW;

const bytes = (path: string): Buffer => Buffer.from(path, 'latin1');

export class HeldDir {
  private constructor(
    private readonly handle: FileHandle,
    private readonly path: Buffer,
  ) {}

  /** The working directory itself, by its path (the user's choice, links in it included). */
  static async openRoot(root: string): Promise<HeldDir> {
    const path = Buffer.from(root, 'utf8');
    return new HeldDir(await open(path, constants.O_RDONLY | constants.O_DIRECTORY), path);
  }

  /** `name` inside this directory, as a path that resolves through the held descriptor. */
  entry(name: string): Buffer {
    return CAN_PIN ? Buffer.concat([bytes(`${FD_DIR}/${this.handle.fd}/`), bytes(name)]) : Buffer.concat([this.path, bytes(`/${name}`)]);
  }

  stat(name: string): Promise<Stats | undefined> {
    return lstat(this.entry(name)).catch(() => undefined);
  }

  /** Removes a file or link standing at `name` (never what a link points at). */
  unlink(name: string): Promise<void> {
    return unlink(this.entry(name));
  }

  /** The directory `name` below this one, or undefined when it is not a directory (missing, a link, a file). */
  async enter(name: string): Promise<HeldDir | undefined> {
    try {
      return new HeldDir(await open(this.entry(name), DIRECTORY_FLAGS), Buffer.concat([this.path, bytes(`/${name}`)]));
    } catch {
      return undefined;
    }
  }

  /** Opens `name` without following a link there or blocking on a FIFO; `create` makes it, failing if anything stands there. */
  openFile(name: string, create?: { mode: number }): Promise<FileHandle> {
    const flags = constants.O_NOFOLLOW | constants.O_NONBLOCK;
    if (!create) return open(this.entry(name), flags | constants.O_RDONLY);
    return open(this.entry(name), flags | constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL, create.mode);
  }

  close(): Promise<void> {
    return this.handle.close();
  }
}

/**
 * Walks from the working directory to the directory holding `path` (relative, `/`-separated).
 * With `make`, a directory missing on the way is made and a link or file standing where one
 * stood is removed first (the link only); without, undefined when a directory on the way is not
 * one (`missing` tells whether it simply is not there). The caller closes what it gets.
 */
export async function walkToParent(root: string, path: string, make: boolean): Promise<{ dir: HeldDir; name: string } | { missing: boolean }> {
  const parts = path.split('/');
  const name = parts.pop() ?? '';
  let dir = await HeldDir.openRoot(root);
  for (const part of parts) {
    let next = await dir.enter(part);
    if (!next && make) {
      const stats = await dir.stat(part);
      if (stats && !stats.isDirectory()) await dir.unlink(part);
      await mkdir(dir.entry(part)).catch((error: NodeJS.ErrnoException) => {
        if (error.code !== 'EEXIST') throw error;
      });
      next = await dir.enter(part);
      if (!next) {
        await dir.close();
        throw new PathChangedError(Buffer.from(path, 'latin1').toString('utf8'));
      }
    }
    if (!next) {
      const missing = (await dir.stat(part)) === undefined;
      await dir.close();
      return { missing };
    }
    await dir.close();
    dir = next;
  }
  return { dir, name };
}
