import { ConflictError, ForbiddenError, NotFoundError, UnprocessableError } from '../errors.js';

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

/** A workspace path that contains, or lies inside, another user's (symbolic links resolved). */
export class WorkspaceOverlapError extends ConflictError {
  constructor(readonly path: string) {
    super(`Workspace overlaps another user's: ${path}`);
  }
}

/**
 * Found at start-up: two users' workspaces overlap (API_KEYS gained a user whose directory lies
 * inside paths stored for another). The service does not start until one of them changes.
 */
export class WorkspacesOverlapAtStartError extends Error {
  constructor(readonly owner: string, readonly other: string, readonly path: string) {
    super(`the workspaces of users ${owner} and ${other} overlap at ${path}: each would reach the other's files. Change one of them (API_KEYS, or the stored user's workspace_paths) before starting`);
  }
}

/** A workspace path that cannot be one: missing, not a directory, not absolute. */
export class WorkspacePathError extends UnprocessableError {}

/**
 * What stands at a user's place under WORKSPACES_DIR is not a directory of the service's own (a
 * symbolic link, a file, another account's directory): nothing of it is used.
 */
export class UnsafeWorkspaceError extends ConflictError {}
