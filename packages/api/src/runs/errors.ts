import { ConflictError, ForbiddenError, NotFoundError, TooManyRequestsError, UnavailableError, UnprocessableError } from '../errors.js';

export class RunNotFoundError extends NotFoundError {
  constructor() {
    super('Run not found');
  }
}

export class RunForbiddenError extends ForbiddenError {}

export class RunAlreadyEndedError extends ConflictError {
  constructor() {
    super('Run already ended');
  }
}

export class IdempotencyMismatchError extends UnprocessableError {
  constructor() {
    super('Idempotency-Key reused with a different request');
  }
}

export class ShuttingDownError extends UnavailableError {
  constructor() {
    super('Service is shutting down');
  }
}

/** Seconds a client refused for its queued runs is told to wait: about how soon a place may free up. */
const QUEUE_RETRY_SECONDS = 5;

export class TooManyQueuedRunsError extends TooManyRequestsError {
  constructor(max: number) {
    super(`Too many queued runs (max ${max}): wait for one to start or cancel one`, QUEUE_RETRY_SECONDS);
  }
}
