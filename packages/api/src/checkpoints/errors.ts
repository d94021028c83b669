import { ConflictError } from '../errors.js';

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
