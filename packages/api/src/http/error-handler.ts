import type { FastifyError, FastifyInstance, FastifyReply } from 'fastify';
import {
  AgentFailedError,
  BadRequestError,
  ConflictError,
  DomainError,
  ForbiddenError,
  InvalidInputError,
  NotFoundError,
  TooLargeError,
  TooManyRequestsError,
  UnauthorizedError,
  UnavailableError,
  UnprocessableError,
} from '../errors.js';
import { asDatabaseUnavailable } from '../db/unavailable.js';
import { loggableError } from '../util/loggable-error.js';
import { showAddresses, type AddressFilter } from '../util/address-hiding.js';
import { invalidJson, toValidationDetail } from './validation-error.js';

/** The status of each kind of domain error; the first class the error is an instance of wins. */
const STATUS_OF: [new (...args: never[]) => DomainError, number][] = [
  [BadRequestError, 400],
  [UnauthorizedError, 401],
  [ForbiddenError, 403],
  [NotFoundError, 404],
  [ConflictError, 409],
  [TooLargeError, 413],
  [UnprocessableError, 422],
  [TooManyRequestsError, 429],
  [AgentFailedError, 500],
  [UnavailableError, 503],
];

export function statusOf(error: DomainError): number {
  return STATUS_OF.find(([kind]) => error instanceof kind)?.[1] ?? 500;
}

/** Fastify's own error codes for bodies that never reached validation. */
const BODY_ERRORS: Record<string, (error: FastifyError) => { status: number; detail: unknown }> = {
  FST_ERR_CTP_INVALID_JSON_BODY: (e) => ({ status: 422, detail: invalidJson(e.message) }),
  FST_ERR_CTP_BODY_TOO_LARGE: () => ({ status: 413, detail: 'Request body is too large' }),
  FST_ERR_CTP_INVALID_MEDIA_TYPE: () => ({ status: 415, detail: 'Unsupported media type: send application/json' }),
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: () => ({ status: 400, detail: 'Request body size did not match Content-Length' }),
};

function isFastifyError(error: unknown): error is FastifyError {
  return error instanceof Error && typeof (error as FastifyError).code === 'string';
}

function sendDomainError(reply: FastifyReply, error: DomainError, filter: AddressFilter): FastifyReply {
  if (error instanceof TooManyRequestsError) reply.header('retry-after', String(error.retryAfterSeconds));
  return reply.code(statusOf(error)).send({ detail: filter(error.detail) });
}

/**
 * The one place errors become HTTP responses. No stack trace ever reaches a client; an
 * unexpected error is logged without SQL text or parameters and answered with a generic 500.
 */
export function installErrorHandling(app: FastifyInstance, filter: AddressFilter = showAddresses): void {
  app.setNotFoundHandler((_request, reply) => reply.code(404).send({ detail: 'Not Found' }));

  app.setErrorHandler((error: unknown, request, reply) => {
    if (error instanceof InvalidInputError) return reply.code(422).send({ detail: error.issues });
    if (error instanceof DomainError) {
      if (statusOf(error) >= 500) request.log.error({ error: loggableError(error) }, 'request failed');
      return sendDomainError(reply, error, filter);
    }
    if (isFastifyError(error) && error.validation) {
      return reply.code(422).send({ detail: toValidationDetail(error.validation, error.validationContext) });
    }
    if (isFastifyError(error)) {
      const mapped = BODY_ERRORS[error.code];
      if (mapped) {
        const { status, detail } = mapped(error);
        return reply.code(status).send({ detail });
      }
      if (error.statusCode !== undefined && error.statusCode >= 400 && error.statusCode < 500) {
        return reply.code(error.statusCode).send({ detail: error.message });
      }
    }
    // A database outage (db/unavailable.ts) is 503; the driver's reason stays in the log.
    const unavailable = asDatabaseUnavailable(error);
    if (unavailable) {
      request.log.warn(unavailable.logFields, 'database unavailable');
      return reply.code(503).send({ detail: unavailable.message });
    }
    request.log.error({ error: loggableError(error) }, 'unhandled error');
    return reply.code(500).send({ detail: 'Internal Server Error' });
  });
}
