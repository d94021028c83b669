import { ModelError, toModelError, type ModelErrorContext } from './errors.js';

/**
 * The signal of one attempt: aborted by the caller, by the timeout, or by us when a stream's
 * reader stops early. The reason is never passed on to fetch, because the SDK treats only
 * AbortError as an abort; `failure` decides afterwards what the caller sees.
 */
export class CallSignal {
  private readonly controller = new AbortController();
  private readonly timer: NodeJS.Timeout;
  private timedOut = false;
  private readonly onCallerAbort = (): void => this.controller.abort();

  constructor(
    private readonly caller: AbortSignal | undefined,
    private readonly timeoutSeconds: number,
  ) {
    this.timer = setTimeout(() => {
      this.timedOut = true;
      this.controller.abort();
    }, timeoutSeconds * 1000);
    if (caller?.aborted) this.controller.abort();
    caller?.addEventListener('abort', this.onCallerAbort, { once: true });
  }

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  /** Closes the HTTP request, e.g. when the consumer of a stream stops reading. */
  abort(): void {
    this.controller.abort();
  }

  dispose(): void {
    clearTimeout(this.timer);
    this.caller?.removeEventListener('abort', this.onCallerAbort);
  }

  /** The error to throw for `error`: the caller's abort reason, a timeout, or a ModelError. */
  failure(error: unknown, context: ModelErrorContext): unknown {
    if (this.caller?.aborted) return this.caller.reason;
    if (this.timedOut) {
      return new ModelError('timeout', `Model runtime at ${context.baseUrl} did not finish within ${this.timeoutSeconds} s (LLM_TIMEOUT_SECONDS)`, {
        cause: error,
      });
    }
    return toModelError(error, context);
  }
}
