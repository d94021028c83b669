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
