import { ConnectionLostError, RequestCancelledError, RequestTimeoutError, ServiceUnreachableError } from './errors.js';

export interface RequestLimits {
  /** Until the response headers arrive. */
  headersMs: number;
  headersTimeout: 'connect' | 'stream';
  /** Longest silence while the body is read. */
  idleMs: number;
  signal?: AbortSignal;
}

/** An open response whose body is read under the idle limit; leaving `chunks` early releases the connection. */
export interface OpenResponse {
  response: Response;
  chunks(): AsyncGenerator<Uint8Array>;
  text(): Promise<string>;
}

function causeCode(error: unknown): string {
  const cause = (error as { cause?: { code?: unknown; message?: unknown } }).cause;
  if (typeof cause?.code === 'string') return cause.code;
  if (typeof cause?.message === 'string') return cause.message;
  return error instanceof Error ? error.message : String(error);
}

/** One timer that aborts the request; re-armed whenever the request shows progress. */
class Watchdog {
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly controller: AbortController) {}

  arm(ms: number, reason: () => Error): void {
    this.disarm();
    this.timer = setTimeout(() => this.controller.abort(reason()), ms);
  }

  disarm(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
  }
}

/**
 * fetch with the client's limits. Every failure comes out as one of the errors in errors.ts,
 * so callers never see undici's `TypeError: fetch failed`.
 */
export async function openRequest(url: string, init: RequestInit, limits: RequestLimits): Promise<OpenResponse> {
  const controller = new AbortController();
  const watchdog = new Watchdog(controller);
  const cancel = (): void => controller.abort(new RequestCancelledError());
  if (limits.signal?.aborted) throw new RequestCancelledError();
  limits.signal?.addEventListener('abort', cancel, { once: true });
  const release = (): void => {
    watchdog.disarm();
    limits.signal?.removeEventListener('abort', cancel);
  };
  const failure = (error: unknown): Error => {
    if (controller.signal.aborted) return controller.signal.reason as Error;
    return error instanceof Error && error.name === 'TypeError' ? new ServiceUnreachableError(url, causeCode(error)) : (error as Error);
  };
  const idle = (): Error => new RequestTimeoutError('stream', limits.idleMs / 1000, url);

  watchdog.arm(limits.headersMs, () => new RequestTimeoutError(limits.headersTimeout, limits.headersMs / 1000, url));
  let response: Response;
  try {
    response = await fetch(url, { ...init, signal: controller.signal });
  } catch (error) {
    release();
    throw failure(error);
  }
  watchdog.disarm();

  async function* chunks(): AsyncGenerator<Uint8Array> {
    if (!response.body) return;
    const reader = response.body.getReader();
    try {
      for (;;) {
        watchdog.arm(limits.idleMs, idle);
        const result = await reader.read().catch((error: unknown) => {
          const reason = failure(error);
          throw reason instanceof ServiceUnreachableError ? new ConnectionLostError(url, reason.code) : reason;
        });
        if (result.done) return;
        yield result.value;
      }
    } finally {
      release();
      reader.cancel().catch(() => undefined);
    }
  }

  async function text(): Promise<string> {
    const decoder = new TextDecoder();
    let body = '';
    for await (const chunk of chunks()) body += decoder.decode(chunk, { stream: true });
    return body + decoder.decode();
  }

  return { response, chunks, text };
}
