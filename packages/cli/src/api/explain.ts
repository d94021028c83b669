import { allowedPathsFix } from '../doctor/fix-lines.js';
import { CliError } from '../errors.js';
import {
  ApiError,
  ConnectionLostError,
  ReattachFailedError,
  RequestCancelledError,
  RequestTimeoutError,
  ServiceUnreachableError,
  UnexpectedResponseError,
} from './errors.js';

const CHECK_URL = 'check api.url in ~/.mada/config.toml, MADA_API_URL or -a/--api';

const UNREACHABLE: Record<string, string> = {
  ECONNREFUSED: 'connection refused',
  ENOTFOUND: 'unknown host',
  EAI_AGAIN: 'host name lookup failed',
  ECONNRESET: 'connection reset',
  EHOSTUNREACH: 'host unreachable',
  ENETUNREACH: 'network unreachable',
  UND_ERR_CONNECT_TIMEOUT: 'connection timed out',
  UND_ERR_SOCKET: 'connection closed by the other side',
};

function explainStatus(error: ApiError): CliError {
  const { status, detail } = error;
  switch (status) {
    case 400: {
      const outside = /^Working directory not allowed: (.+)$/s.exec(detail)?.[1];
      if (outside !== undefined) {
        return new CliError(`The service may not work in ${outside}: it is outside your workspace (400)`, `${allowedPathsFix(outside)}; \`mada doctor\` checks it`);
      }
      return new CliError(`The service answered 400: ${detail}`);
    }
    case 401:
      return detail === 'Missing API key'
        ? new CliError('The service needs an API key (401 Missing API key)', 'set MADA_API_KEY or api.key in ~/.mada/config.toml')
        : new CliError(
            `The service rejected the API key (401 ${detail})`,
            'check MADA_API_KEY or api.key; a service without API_KEYS takes no key at all',
          );
    case 403: {
      const what = new URL(error.url).pathname.startsWith('/runs') ? 'run' : 'session';
      return new CliError(`Not allowed (403 ${detail})`, `this ${what} belongs to another user: check the API key you use`);
    }
    case 404:
      if (detail === 'Run not found') return new CliError('Run not found (404)', 'it may have been deleted; `mada runs` lists yours');
      if (detail === 'Approval not found') return new CliError('Approval not found (404)', '`mada approvals` lists the ones waiting for you');
      if (detail === 'Key not found') return new CliError('Key not found (404)', '`mada keys` lists yours');
      if (detail === 'Webhook not found') return new CliError('Webhook not found (404)', '`mada webhooks` lists yours');
      return detail === 'Conversation not found'
        ? new CliError('Session not found (404)', 'it may have expired or been deleted; `mada sessions` lists the ones you have')
        : new CliError(`Not found: ${error.url} (404 ${detail})`, `is this a mada service? ${CHECK_URL}`);
    case 409:
      if (detail === 'Run already ended') return new CliError('The run has already ended (409 Run already ended)', '`mada runs` shows how it ended');
      if (detail.startsWith('Webhook limit reached')) return new CliError(`${detail} (409)`, '`mada webhooks rm <id>` deletes one');
      return new CliError(`The session is busy (409 ${detail})`, 'another turn is still running in it; wait for it to finish');
    case 422:
      // The service's reasons for refusing a URL: the user's to fix, not a version mismatch.
      if (detail.startsWith('Webhook URL ')) {
        const hint = detail.includes('private') ? 'a receiver on a private network needs WEBHOOK_ALLOW_PRIVATE=true on the service' : undefined;
        return new CliError(`The service refused the URL (422 ${detail})`, hint);
      }
      return new CliError(`The service refused the request (422 ${detail})`, 'the client and the service may disagree on versions: `mada status`');
    case 429: {
      const wait = error.retryAfterSeconds === undefined ? 'wait a moment' : `retry in ${error.retryAfterSeconds} s`;
      return new CliError(`Too many requests (429 ${detail})`, `${wait}; the limit is RATE_LIMIT_PER_MINUTE on the service`);
    }
    default:
      if (status >= 500) return new CliError(`The service failed (${status} ${detail})`, 'the service log has the details');
      return new CliError(`The service answered ${status}: ${detail}`);
  }
}

/** Turns any failure of a service call into one readable line with a hint. */
export function explainFailure(error: unknown): CliError {
  if (error instanceof CliError) return error;
  if (error instanceof ApiError) return explainStatus(error);
  if (error instanceof ServiceUnreachableError) {
    const reason = UNREACHABLE[error.code] ?? error.code;
    return new CliError(`Cannot reach the mada service at ${new URL(error.url).origin} (${reason})`, `is it running? ${CHECK_URL}`);
  }
  if (error instanceof RequestTimeoutError) {
    return error.kind === 'connect'
      ? new CliError(`No answer from ${new URL(error.url).origin} within ${error.seconds} s`, `${CHECK_URL}; api.connect_timeout sets the limit`)
      : new CliError(`The service went silent for ${error.seconds} s; gave up`, 'api.stream_timeout sets the limit');
  }
  if (error instanceof ConnectionLostError) {
    return new CliError(`The connection to the service was lost (${UNREACHABLE[error.reason] ?? error.reason})`, 'try again');
  }
  if (error instanceof ReattachFailedError) {
    return new CliError(
      `Lost the run's event stream and could not reattach (${UNREACHABLE[error.reason] ?? error.reason})`,
      `the run may go on in the service: \`mada attach ${error.runId}\` follows it, \`mada cancel ${error.runId}\` stops it`,
    );
  }
  if (error instanceof UnexpectedResponseError) {
    return new CliError(`Unexpected answer from ${error.url}`, `is this a mada service? ${CHECK_URL}`);
  }
  if (error instanceof RequestCancelledError) return new CliError('Cancelled');
  return new CliError(error instanceof Error ? error.message : String(error));
}
