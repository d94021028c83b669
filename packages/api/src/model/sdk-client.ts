import type { Log } from '../util/log.js';
import { retryAsync, type RetryOptions } from '../util/retry.js';
import { CallSignal } from './call-signal.js';
import { ModelError, streamWithoutFinish, type ModelErrorContext } from './errors.js';
import { responseFromContent, toSdkPrompt, toSdkTool, type CallOptions, type LanguageModel, type SdkStreamPart } from './sdk-convert.js';
import { StreamAssembler } from './stream-assembler.js';
import type { ModelClient, ModelRequest, ModelResponse, ModelStreamPart } from './types.js';

export interface SdkClientConfig {
  context: ModelErrorContext;
  temperature: number;
  /** Provider-specific options of each call (Ollama's `options.num_ctx`), read at each call. */
  providerOptions: () => CallOptions['providerOptions'];
  timeoutSeconds: number;
  retry: Pick<RetryOptions, 'maxAttempts' | 'baseDelay' | 'maxDelay' | 'jitter'> & {
    /** Told of each retry, with the logger the call was given. */
    onRetry?: (error: unknown, attempt: number, delayMs: number, log: Log | undefined) => void;
  };
}

type Reader = ReadableStreamDefaultReader<SdkStreamPart>;

/** A stream whose first output part has arrived: from here on nothing is retried. */
interface OpenedStream {
  call: CallSignal;
  reader: Reader;
  assembler: StreamAssembler;
  first: ModelStreamPart;
  /** The finish part has been handed on: the response was read to its end. */
  finished: boolean;
}

const ignore = (): void => undefined;

/**
 * A ModelClient over the AI SDK's provider-level model (`doGenerate`/`doStream`) rather than
 * `generateText`/`streamText`: the agent engine runs its own loop, retries and argument
 * validation, and those functions would add a second retry layer, console logging, tool-step
 * machinery, and turn failures and aborts into stream parts instead of errors.
 */
export class SdkModelClient implements ModelClient {
  constructor(
    private readonly languageModel: LanguageModel,
    private readonly config: SdkClientConfig,
  ) {}

  get provider(): 'ollama' | 'openai' {
    return this.config.context.provider;
  }

  get model(): string {
    return this.config.context.model;
  }

  complete(request: ModelRequest, signal?: AbortSignal, log?: Log): Promise<ModelResponse> {
    return retryAsync(() => this.completeOnce(request, signal), this.retryOptions(signal, log));
  }

  async *stream(request: ModelRequest, signal?: AbortSignal, log?: Log): AsyncIterable<ModelStreamPart> {
    const opened = await retryAsync(() => this.openStream(request, signal), this.retryOptions(signal, log));
    try {
      yield* this.rest(opened);
    } finally {
      // Also reached when the consumer stops early: the HTTP request must not outlive it. Cancel
      // before aborting: the Ollama provider's cancel leaves a rejection unhandled on an aborted body.
      await opened.reader.cancel().catch(ignore);
      // A stream that got to its finish has read the whole response (the providers send it once
      // their source ends): nothing is left to close, and an abort costs an exception and an
      // event for every model call.
      if (!opened.finished) opened.call.abort();
      opened.call.dispose();
    }
  }

  private async completeOnce(request: ModelRequest, signal: AbortSignal | undefined): Promise<ModelResponse> {
    const call = new CallSignal(signal, this.config.timeoutSeconds);
    try {
      const result = await this.languageModel.doGenerate(this.callOptions(request, call.signal));
      return responseFromContent(result.content, result.finishReason, result.usage);
    } catch (error) {
      throw call.failure(error, this.config.context);
    } finally {
      call.dispose();
    }
  }

  private async openStream(request: ModelRequest, signal: AbortSignal | undefined): Promise<OpenedStream> {
    const call = new CallSignal(signal, this.config.timeoutSeconds);
    let reader: Reader | undefined;
    try {
      const { stream } = await this.languageModel.doStream(this.callOptions(request, call.signal));
      reader = stream.getReader();
      const assembler = new StreamAssembler();
      const first = await this.next(reader, assembler, call);
      return { call, reader, assembler, first, finished: false };
    } catch (error) {
      const failure = call.failure(error, this.config.context);
      call.abort();
      call.dispose();
      reader?.cancel().catch(ignore);
      throw failure;
    }
  }

  private async *rest(opened: OpenedStream): AsyncGenerator<ModelStreamPart> {
    const { call, reader, assembler } = opened;
    let part = opened.first;
    for (;;) {
      opened.finished = part.type === 'finish';
      yield part;
      if (opened.finished) return;
      part = await this.next(reader, assembler, call);
    }
  }

  /** The next part the consumer should see; failures come out as they will be thrown. */
  private async next(reader: Reader, assembler: StreamAssembler, call: CallSignal): Promise<ModelStreamPart> {
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) throw streamWithoutFinish();
        const part = assembler.accept(value);
        if (part !== undefined) return part;
      }
    } catch (error) {
      throw call.failure(error, this.config.context);
    }
  }

  private callOptions(request: ModelRequest, abortSignal: AbortSignal): CallOptions {
    const tools = request.tools ?? [];
    const providerOptions = this.config.providerOptions();
    return {
      prompt: toSdkPrompt(request.messages),
      ...(tools.length > 0 ? { tools: tools.map(toSdkTool) } : {}),
      temperature: this.config.temperature,
      ...(providerOptions === undefined ? {} : { providerOptions }),
      abortSignal,
    };
  }

  private retryOptions(signal: AbortSignal | undefined, log: Log | undefined): RetryOptions {
    const { onRetry, ...retry } = this.config.retry;
    return {
      ...retry,
      ...(onRetry === undefined ? {} : { onRetry: (error: unknown, attempt: number, delayMs: number) => onRetry(error, attempt, delayMs, log) }),
      ...(signal === undefined ? {} : { signal }),
      shouldRetry: (error) => error instanceof ModelError && error.retryable,
    };
  }
}
