/** The service answered with an error status. `detail` is the body's `detail` when it had one. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly detail: string,
    readonly method: string,
    readonly url: string,
    readonly retryAfterSeconds?: number,
  ) {
    super(`${method} ${url}: ${status} ${detail}`);
    this.name = 'ApiError';
  }
}

/** No HTTP answer at all: refused, unknown host, reset before the response. */
export class ServiceUnreachableError extends Error {
  constructor(
    readonly url: string,
    readonly code: string,
  ) {
    super(`cannot reach ${url} (${code})`);
    this.name = 'ServiceUnreachableError';
  }
}

/** `connect`: no answer in time; `stream`: the answer went silent for too long. */
export class RequestTimeoutError extends Error {
  constructor(
    readonly kind: 'connect' | 'stream',
    readonly seconds: number,
    readonly url: string,
  ) {
    super(`${kind} timeout after ${seconds} s: ${url}`);
    this.name = 'RequestTimeoutError';
  }
}

/** The user cancelled (Ctrl-C). */
export class RequestCancelledError extends Error {
  constructor() {
    super('cancelled');
    this.name = 'RequestCancelledError';
  }
}

/** An answer that is not what a mada service sends (wrong JSON, HTML from a proxy, another program). */
export class UnexpectedResponseError extends Error {
  constructor(
    readonly url: string,
    readonly problem: string,
  ) {
    super(`unexpected response from ${url}: ${problem}`);
    this.name = 'UnexpectedResponseError';
  }
}

/** The connection broke while a body was being read. */
export class ConnectionLostError extends Error {
  constructor(
    readonly url: string,
    readonly reason: string,
  ) {
    super(`connection to ${url} lost: ${reason}`);
    this.name = 'ConnectionLostError';
  }
}

/** A run's event stream broke and every attempt to reattach to it failed; the run itself goes on. */
export class ReattachFailedError extends Error {
  constructor(
    readonly runId: string,
    readonly reason: string,
  ) {
    super(`could not reattach to run ${runId}: ${reason}`);
    this.name = 'ReattachFailedError';
  }
}
