import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { createOllama } from 'ollama-ai-provider-v2';
import type { Settings } from '../settings.js';
import type { Log } from '../util/log.js';
import { ModelError } from './errors.js';
import { runtimeFetch } from './runtime-fetch.js';
import { SdkModelClient, type SdkClientConfig } from './sdk-client.js';
import type { CallOptions, LanguageModel } from './sdk-convert.js';
import type { RuntimeInfoSource } from './runtime-info.js';
import type { ModelClient } from './types.js';

export type ModelSettings = Pick<
  Settings,
  | 'llmProvider'
  | 'llmBaseUrl'
  | 'llmModel'
  | 'llmApiKey'
  | 'llmTemperature'
  | 'llmNumCtx'
  | 'llmTimeoutSeconds'
  | 'retryMaxAttempts'
  | 'retryBaseDelay'
  | 'retryMaxDelay'
>;

export interface ModelClientOptions {
  /** Told about each retry, e.g. to log it on `log`, the logger the call was given (a run's). */
  onRetry?: (error: ModelError, attempt: number, delayMs: number, log: Log | undefined) => void;
  /** The runtime's window, for Ollama's `num_ctx`; LLM_NUM_CTX when absent. */
  runtime?: RuntimeInfoSource;
}

interface ProviderModel {
  languageModel: LanguageModel;
  providerOptions: () => CallOptions['providerOptions'];
}

const bearer = (apiKey: string): Record<string, string> => (apiKey === '' ? {} : { Authorization: `Bearer ${apiKey}` });

function ollamaModel(settings: ModelSettings, windowTokens: () => number): ProviderModel {
  const provider = createOllama({ baseURL: `${settings.llmBaseUrl}/api`, headers: bearer(settings.llmApiKey), fetch: runtimeFetch(settings.llmBaseUrl) });
  return {
    languageModel: provider.chat(settings.llmModel),
    // Ollama reads sampling settings only from `options` (the provider also sends a top-level
    // `temperature`, which Ollama ignores), and without num_ctx it silently truncates the prompt.
    // num_ctx follows the window the runtime reports, never above it.
    providerOptions: () => ({ ollama: { options: { num_ctx: windowTokens(), temperature: settings.llmTemperature } } }),
  };
}

function openaiModel(settings: ModelSettings): ProviderModel {
  const provider = createOpenAICompatible({
    name: 'llm',
    baseURL: settings.llmBaseUrl,
    fetch: runtimeFetch(settings.llmBaseUrl),
    ...(settings.llmApiKey === '' ? {} : { apiKey: settings.llmApiKey }),
    // vLLM, llama.cpp and Ollama's /v1 report token usage in streams only when asked.
    includeUsage: true,
  });
  return { languageModel: provider.chatModel(settings.llmModel), providerOptions: () => undefined };
}

/** The client for LLM_PROVIDER: Ollama's native /api/chat, or any OpenAI-compatible /v1/chat/completions. */
export function createModelClient(settings: ModelSettings, options: ModelClientOptions = {}): ModelClient {
  const windowTokens = (): number => options.runtime?.current().contextWindow ?? settings.llmNumCtx;
  const { languageModel, providerOptions } = settings.llmProvider === 'ollama' ? ollamaModel(settings, windowTokens) : openaiModel(settings);
  const config: SdkClientConfig = {
    context: { provider: settings.llmProvider, baseUrl: settings.llmBaseUrl, model: settings.llmModel },
    temperature: settings.llmTemperature,
    providerOptions,
    timeoutSeconds: settings.llmTimeoutSeconds,
    retry: {
      maxAttempts: settings.retryMaxAttempts,
      baseDelay: settings.retryBaseDelay,
      maxDelay: settings.retryMaxDelay,
      onRetry: (error, attempt, delayMs, log) => {
        if (error instanceof ModelError) options.onRetry?.(error, attempt, delayMs, log);
      },
    },
  };
  return new SdkModelClient(languageModel, config);
}
