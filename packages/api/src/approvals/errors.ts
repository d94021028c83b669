import { ConflictError, ForbiddenError, NotFoundError } from '../errors.js';

export class ApprovalNotFoundError extends NotFoundError {
  constructor() {
    super('Approval not found');
  }
}

export class ApprovalForbiddenError extends ForbiddenError {}

export class ApprovalDecidedError extends ConflictError {
  constructor() {
    super('Approval already decided');
  }
}
