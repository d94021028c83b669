import { APICallError } from 'ai';
import { isRetryable, RETRYABLE_STATUSES } from '../util/retry.js';

export type ModelErrorKind =
  /** No connection to the runtime at all. */
  | 'unreachable'
  /** The connection broke while the request or the answer was under way. */
  | 'disconnected'
  | 'timeout'
  | 'model-not-found'
  /** Any other HTTP error status. */
  | 'http'
  /** The runtime stopped mid-answer: it reported an error in the stream, or ended it unfinished. */
  | 'interrupted'
  /** An answer that could not be read: invalid JSON, a stream that stopped without finishing. */
  | 'invalid-response';

/** A failed model call, with a message fit for a log line or an `error` event. */
export class ModelError extends Error {
  constructor(
    readonly kind: ModelErrorKind,
    message: string,
    readonly options: { status?: number; retryable?: boolean; cause?: unknown } = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'ModelError';
  }

  get status(): number | undefined {
    return this.options.status;
  }

  /** Worth another attempt if nothing was delivered yet. */
  get retryable(): boolean {
    return this.options.retryable === true;
  }
}

/** A stream that ended before its finish part: what was said of the answer may be cut short. */
export const streamWithoutFinish = (): ModelError => new ModelError('invalid-response', 'The model runtime stream ended without a finish');

/** What an error message names. */
export interface ModelErrorContext {
  provider: 'ollama' | 'openai';
  baseUrl: string;
  model: string;
}

const EXCERPT_LENGTH = 300;
const truncate = (text: string): string => (text.length > EXCERPT_LENGTH ? `${text.slice(0, EXCERPT_LENGTH)}...` : text);

/** The runtime's own words: `{"error": "..."}` (Ollama), `{"error": {"message"}}` (OpenAI), `{"message"}` (vLLM). */
export function errorBodyExcerpt(body: string | undefined): string {
  const text = (body ?? '').trim();
  let message: unknown;
  try {
    const parsed = JSON.parse(text) as { error?: unknown; message?: unknown };
    message = typeof parsed.error === 'object' && parsed.error !== null ? (parsed.error as { message?: unknown }).message : (parsed.error ?? parsed.message);
  } catch {
    message = undefined;
  }
  return truncate(typeof message === 'string' && message !== '' ? message : text);
}

function causeText(error: unknown): string {
  const parts: string[] = [];
  for (let current = error, depth = 0; current instanceof Error && depth < 4; current = current.cause, depth++) {
    if (!parts.includes(current.message)) parts.push(current.message);
  }
  return parts.join(': ');
}

const REFUSED = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EHOSTUNREACH', 'ENETUNREACH', 'EAI_AGAIN', 'UND_ERR_CONNECT_TIMEOUT']);

function codeOf(error: unknown): string | undefined {
  for (let current = error, depth = 0; current instanceof Error && depth < 4; current = current.cause, depth++) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string') return code;
  }
  return undefined;
}

function connectionError(error: unknown, context: ModelErrorContext): ModelError {
  const code = codeOf(error);
  if (code !== undefined && REFUSED.has(code)) {
    return new ModelError('unreachable', `Model runtime unreachable at ${context.baseUrl} (${code}): is it running, and is LLM_BASE_URL right?`, {
      retryable: true,
      cause: error,
    });
  }
  return new ModelError('disconnected', `Connection to the model runtime at ${context.baseUrl} failed: ${causeText(error)}`, { retryable: true, cause: error });
}

function notFound(error: APICallError, excerpt: string, context: ModelErrorContext): ModelError {
  if (/model/i.test(excerpt)) {
    const hint = context.provider === 'ollama' ? ` (pull it with: ollama pull ${context.model})` : '';
    return new ModelError('model-not-found', `Model "${context.model}" not found at ${context.baseUrl}${hint}: ${excerpt}`, { status: 404, cause: error });
  }
  const hint = context.provider === 'openai' ? '; for openai LLM_BASE_URL includes /v1' : '';
  return new ModelError('http', `Model runtime answered HTTP 404 at ${error.url}${hint}: ${excerpt || 'no body'}`, { status: 404, cause: error });
}

function httpError(error: APICallError, context: ModelErrorContext): ModelError {
  const status = error.statusCode ?? 0;
  const excerpt = errorBodyExcerpt(error.responseBody);
  if (status === 404) return notFound(error, excerpt, context);
  return new ModelError('http', `Model runtime answered HTTP ${status} at ${error.url}: ${excerpt || 'no body'}`, {
    status,
    retryable: RETRYABLE_STATUSES.has(status),
    cause: error,
  });
}

/** The `error` of an in-stream error event arrives as the runtime's plain object, not an Error. */
function reportedMessage(error: unknown): string | undefined {
  if (error instanceof Error || typeof error !== 'object' || error === null) return typeof error === 'string' ? error : undefined;
  const message = (error as { message?: unknown }).message;
  return typeof message === 'string' ? message : undefined;
}

/** Turns whatever the SDK or fetch threw into a ModelError. Aborts and timeouts are decided by the caller. */
export function toModelError(error: unknown, context: ModelErrorContext): ModelError {
  if (error instanceof ModelError) return error;
  const reported = reportedMessage(error);
  if (reported !== undefined) {
    return new ModelError('interrupted', `Model runtime at ${context.baseUrl} reported an error mid-answer: ${truncate(reported)}`);
  }
  const answeredWithError = APICallError.isInstance(error) && error.statusCode !== undefined && error.statusCode >= 300;
  if (answeredWithError) return httpError(error, context);
  // A connection that broke mid-answer arrives wrapped as a failure to read a 200 response.
  if (isRetryable(error) || (APICallError.isInstance(error) && error.statusCode === undefined)) return connectionError(error, context);
  return new ModelError('invalid-response', `Model runtime at ${context.baseUrl} sent an answer that could not be read: ${causeText(error) || String(error)}`, {
    cause: error,
  });
}

/**
 * The runtime refused the request because the model cannot take `tools`: Ollama's `... does not
 * support tools`, vLLM's `"auto" tool choice requires --enable-auto-tool-choice`, and the like.
 */
export function refusesTools(error: unknown): boolean {
  if (!(error instanceof ModelError) || error.kind !== 'http' || error.status === undefined || error.status >= 500) return false;
  return /does not support (tools|function)|tools? (are|is) not supported|tool choice requires|not support(ed)? (tool|function) call/i.test(error.message);
}
