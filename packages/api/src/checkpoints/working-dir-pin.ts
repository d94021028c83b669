import { closeSync, constants, existsSync, fstatSync, openSync, readlinkSync } from 'node:fs';
import { WorkingDirChangedError } from './errors.js';

/**
 * A run's working directory pinned by identity. A run's `bash` can rename the directory and put a
 * link to anywhere (or another directory) at its path; anything that then resolves the path again
 * (the end snapshot, a later changes or revert request) would find something that is not the
 * run's and, running unconfined, read or write it. The identity is taken when the run starts and
 * kept with its checkpoint; each later use opens the path, compares the directory it got (device
 * and inode) and the path the kernel holds for it (no link on the way), and works through that
 * descriptor.
 */

/** Device and inode, as decimal strings (they may exceed 2^53), stored with the checkpoint. */
export interface DirIdentity {
  dev: string;
  ino: string;
}

const FD_DIR = '/proc/self/fd';
/** Elsewhere (policy-only development on another OS) only device and inode are compared. */
const CAN_PIN = existsSync(FD_DIR);

export const identityOf = (fd: number): DirIdentity => {
  const stats = fstatSync(fd, { bigint: true });
  return { dev: String(stats.dev), ino: String(stats.ino) };
};

/** A directory held open; `path` resolves through the descriptor, whatever its name leads to now. */
export class PinnedDir {
  constructor(
    readonly fd: number,
    readonly identity: DirIdentity,
    private readonly name: string,
  ) {}

  /** A path to the held directory itself (its name when descriptors cannot be named). */
  get path(): string {
    return CAN_PIN ? `${FD_DIR}/${this.fd}` : this.name;
  }

  close(): void {
    closeSync(this.fd);
  }
}

/**
 * Opens `workingDir` (absolute and resolved when the run was made) and holds it. With `expected`,
 * refuses unless it is that very directory, reached without a link on the way.
 */
export function openWorkingDir(workingDir: string, expected?: DirIdentity): PinnedDir {
  let fd: number;
  try {
    fd = openSync(workingDir, constants.O_RDONLY | constants.O_DIRECTORY);
  } catch {
    throw new WorkingDirChangedError(workingDir);
  }
  try {
    const identity = identityOf(fd);
    if (expected && (identity.dev !== expected.dev || identity.ino !== expected.ino)) throw new WorkingDirChangedError(workingDir);
    // The kernel's name for what was opened: another one means a link on the way (or a directory
    // since deleted, which the kernel names `... (deleted)`).
    if (CAN_PIN && readlinkSync(`${FD_DIR}/${fd}`) !== workingDir) throw new WorkingDirChangedError(workingDir);
    return new PinnedDir(fd, identity, workingDir);
  } catch (error) {
    closeSync(fd);
    throw error;
  }
}

/** Whether `workingDir` still leads to `identity`; false instead of the error. */
export function stillLeadsTo(workingDir: string, identity: DirIdentity): boolean {
  try {
    openWorkingDir(workingDir, identity).close();
    return true;
  } catch {
    return false;
  }
}
