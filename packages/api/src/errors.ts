/**
 * Domain errors, each carrying the HTTP status it maps to. Modules below http/ throw these and
 * never know about Fastify; http/error-handler.ts turns them into `{"detail": ...}` bodies.
 */
export class AppError extends Error {
  constructor(
    readonly status: number,
    readonly detail: string,
  ) {
    super(detail);
    this.name = new.target.name;
  }
}

export class BadRequestError extends AppError {
  constructor(detail: string) {
    super(400, detail);
  }
}

export class UnauthorizedError extends AppError {
  constructor(detail: 'Missing API key' | 'Invalid API key') {
    super(401, detail);
  }
}

export class ForbiddenError extends AppError {
  constructor(detail = 'Not authorized') {
    super(403, detail);
  }
}

export class NotFoundError extends AppError {
  constructor(detail = 'Not Found') {
    super(404, detail);
  }
}

export class ConflictError extends AppError {
  constructor(detail: string) {
    super(409, detail);
  }
}

export class UnknownAgentError extends BadRequestError {
  constructor(readonly agentType: string) {
    super(`Unknown agent type: ${agentType}`);
  }
}
