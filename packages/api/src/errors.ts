/**
 * Domain errors: what went wrong, in words a client may read. They know nothing of HTTP; the one
 * place that turns them into statuses and `{"detail": ...}` bodies is http/error-handler.ts.
 */
export class DomainError extends Error {
  constructor(readonly detail: string) {
    super(detail);
    this.name = new.target.name;
  }
}

/** The request asks for something that cannot be done as asked. */
export class BadRequestError extends DomainError {}

/** No credential, or one the service does not know (an API key, or the metrics token). */
export class UnauthorizedError extends DomainError {
  constructor(detail: 'Missing API key' | 'Invalid API key' | 'Session expired' | 'Missing metrics token' | 'Invalid metrics token') {
    super(detail);
  }
}

/** The caller is known but may not do this (someone else's conversation, a limit reached, a refused Host). */
export class ForbiddenError extends DomainError {
  constructor(detail = 'Not authorized') {
    super(detail);
  }
}

export class NotFoundError extends DomainError {
  constructor(detail = 'Not Found') {
    super(detail);
  }
}

/** The resource is in a state that does not allow this now (a turn already running). */
export class ConflictError extends DomainError {}

/** Well-formed input the service cannot act on (an Idempotency-Key reused for another request). */
export class UnprocessableError extends DomainError {}

/** The service cannot take this on now (shutting down); trying later may work. */
export class UnavailableError extends DomainError {}

/** What the client sent is larger than a configured limit. */
export class TooLargeError extends DomainError {}

/** The caller must wait `retryAfterSeconds` before trying again. */
export class TooManyRequestsError extends DomainError {
  constructor(
    detail: string,
    readonly retryAfterSeconds: number,
  ) {
    super(detail);
  }
}

/** The agent behind a conversation turn failed; the user message stays stored. */
export class AgentFailedError extends DomainError {
  constructor(readonly reason: string) {
    super(`Agent error: ${reason}`);
  }
}

export class UnknownAgentError extends BadRequestError {
  constructor(readonly agentType: string) {
    super(`Unknown agent type: ${agentType}`);
  }
}

/** One problem with a request field, located as FastAPI locates it (`["body", "content"]`). */
export interface InputIssue {
  loc: (string | number)[];
  msg: string;
  type: string;
}

/** Input that passed the schema but cannot be accepted (answered like a validation failure). */
export class InvalidInputError extends DomainError {
  constructor(readonly issues: InputIssue[]) {
    super(issues.map((issue) => issue.msg).join('; '));
  }
}
