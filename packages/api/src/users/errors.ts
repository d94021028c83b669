import { ConflictError, ForbiddenError, NotFoundError } from '../errors.js';

export class UserNotFoundError extends NotFoundError {
  constructor() {
    super('User not found');
  }
}

/** Also another user's key: nobody learns which key ids exist. */
export class KeyNotFoundError extends NotFoundError {
  constructor() {
    super('Key not found');
  }
}

export class UserExistsError extends ConflictError {
  constructor() {
    super('User already exists');
  }
}

export class LocalModeError extends ConflictError {
  constructor() {
    super('Local mode has no keys');
  }
}

/** A user of API_KEYS is changed there, not through the API. */
export class ConfiguredUserError extends ConflictError {
  constructor() {
    super('User is configured in API_KEYS: change it there');
  }
}

export class AdminOnlyError extends ForbiddenError {
  constructor() {
    super('Admin only');
  }
}
