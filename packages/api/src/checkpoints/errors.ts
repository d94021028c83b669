import { ConflictError } from '../errors.js';
import { FLOOR_SETTINGS } from '../tools/sandbox/disk-floor.js';

export class RunInProgressError extends ConflictError {
  constructor() {
    super('Run still in progress');
  }
}

export class NoCheckpointError extends ConflictError {
  constructor(reason?: string) {
    super(reason ? `No checkpoint for this run: ${reason}` : 'No checkpoint for this run');
  }
}

export class FilesChangedError extends ConflictError {
  constructor(readonly paths: readonly string[]) {
    super(`Files changed since the run: ${paths.join(', ')}`);
  }
}

/** A directory on the way to a file being restored was swapped (for a link) while the revert walked it. */
export class PathChangedError extends ConflictError {
  constructor(path: string) {
    super(`Revert stopped: a directory on the way to ${path} was replaced while it was being restored (for example by a symbolic link)`);
  }
}

/**
 * The run's working directory path no longer leads to the directory the run started in: it was
 * moved away and something else (a link, another directory) put at its path, or a directory above
 * it was swapped for a link. What is there now is not the run's to snapshot or revert.
 */
export class WorkingDirChangedError extends ConflictError {
  constructor(readonly path: string) {
    super(`the working directory ${path} is no longer the one the run started in (moved or replaced, or reached through a symbolic link since)`);
  }
}

/** A revert writes only inside the sandbox; with the sandbox on but not working, it refuses. */
export class RevertSandboxUnavailableError extends ConflictError {
  constructor(why: string) {
    super(`Revert needs the sandbox (bubblewrap), which is not available: ${why}`);
  }
}

/** A revert that found the working directory's path leading elsewhere: nothing was reverted. */
export class RevertRefusedError extends ConflictError {
  constructor(cause: WorkingDirChangedError) {
    super(`Revert refused: ${cause.detail}; nothing was reverted`);
  }
}

/** A snapshot reads the working directory only inside the sandbox; with the sandbox on but not working, it fails (and says so). */
export class SnapshotSandboxUnavailableError extends Error {
  constructor(why: string) {
    super(`checkpoints need the sandbox (bubblewrap) to read the working directory, which is not available: ${why}`);
    this.name = 'SnapshotSandboxUnavailableError';
  }
}

/**
 * DATA_DIR's file system is below the free-space floor (tools/sandbox/disk-floor.ts): the room left
 * is kept for the database and stored runs, which every user's runs need; a checkpoint is optional.
 */
export class SnapshotBelowDiskFloorError extends Error {
  constructor(reason: string) {
    super(`no room for it: ${reason} (${FLOOR_SETTINGS})`);
    this.name = 'SnapshotBelowDiskFloorError';
  }
}

/**
 * The run's working directory is no longer in its owner's workspace (an admin changed the user's
 * paths): whatever is there now may be another user's, so it is neither read nor reverted.
 */
export class OutsideWorkspaceError extends ConflictError {
  constructor(dir: string) {
    super(`Working directory no longer in your workspace: ${dir}`);
  }
}
