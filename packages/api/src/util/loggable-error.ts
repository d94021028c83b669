import { errorMessage } from './error-message.js';

export interface LoggableError {
  type: string;
  message: string;
  code?: string;
  stack?: string;
}

/** A driver error wrapped by drizzle: its message and fields hold the SQL text and the parameters. */
function isQueryWrapper(error: Error): boolean {
  return 'query' in error && 'params' in error;
}

/**
 * What a log line keeps of an unexpected error: its kind, code, message and stack, taken from the
 * driver's own error when drizzle wrapped it, so neither SQL text nor statement parameters (a
 * user's message, a key) are written; the driver's other fields (PostgreSQL's `detail` quotes
 * values) are left out.
 */
export function loggableError(error: unknown): LoggableError {
  if (!(error instanceof Error)) return { type: typeof error, message: errorMessage(error) };
  let inner: Error = error;
  while (isQueryWrapper(inner) && inner.cause instanceof Error) inner = inner.cause;
  if (isQueryWrapper(inner)) return { type: 'DatabaseError', message: 'database query failed' };
  const code = (inner as NodeJS.ErrnoException).code;
  return {
    type: inner.name,
    message: inner.message,
    ...(typeof code === 'string' ? { code } : {}),
    ...(inner.stack === undefined ? {} : { stack: inner.stack }),
  };
}
