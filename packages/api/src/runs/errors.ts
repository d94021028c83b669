import { ConflictError, ForbiddenError, NotFoundError, UnavailableError, UnprocessableError } from '../errors.js';

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
