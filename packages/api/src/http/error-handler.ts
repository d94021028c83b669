import type { FastifyError, FastifyInstance } from 'fastify';
import { AppError } from '../errors.js';
import { invalidJson, missingBody, toValidationDetail } from './validation-error.js';

/** Fastify's own error codes for bodies that never reached validation. */
const BODY_ERRORS: Record<string, (error: FastifyError) => { status: number; detail: unknown }> = {
  FST_ERR_CTP_EMPTY_JSON_BODY: () => ({ status: 422, detail: missingBody() }),
  FST_ERR_CTP_INVALID_JSON_BODY: (e) => ({ status: 422, detail: invalidJson(e.message) }),
  FST_ERR_CTP_BODY_TOO_LARGE: () => ({ status: 413, detail: 'Request body is too large' }),
  FST_ERR_CTP_INVALID_MEDIA_TYPE: () => ({ status: 415, detail: 'Unsupported media type: send application/json' }),
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: () => ({ status: 400, detail: 'Request body size did not match Content-Length' }),
};

function isFastifyError(error: unknown): error is FastifyError {
  return error instanceof Error && typeof (error as FastifyError).code === 'string';
}

/** The one place errors become HTTP responses. No stack trace ever reaches a client. */
export function installErrorHandling(app: FastifyInstance): void {
  app.setNotFoundHandler((_request, reply) => reply.code(404).send({ detail: 'Not Found' }));

  app.setErrorHandler((error: unknown, request, reply) => {
    if (error instanceof AppError) return reply.code(error.status).send({ detail: error.detail });
    if (isFastifyError(error) && error.validation) {
      return reply.code(422).send({ detail: toValidationDetail(error.validation, error.validationContext) });
    }
    if (isFastifyError(error)) {
      const mapped = BODY_ERRORS[error.code];
      if (mapped) {
        const { status, detail } = mapped(error);
        return reply.code(status).send({ detail });
      }
      if (error.statusCode === 429) return reply.code(429).send({ detail: error.message });
      if (error.statusCode !== undefined && error.statusCode >= 400 && error.statusCode < 500) {
        return reply.code(error.statusCode).send({ detail: error.message });
      }
    }
    request.log.error({ err: error }, 'unhandled error');
    return reply.code(500).send({ detail: 'Internal Server Error' });
  });
}
