import type { ScriptedModel } from '@mada/testkit';
import type { ModelSettings } from '../../src/model/index.js';

export type Provider = ModelSettings['llmProvider'];

/** Settings pointing the client at a scripted runtime; retries are immediate so tests stay fast. */
export function modelSettings(model: ScriptedModel, provider: Provider, overrides: Partial<ModelSettings> = {}): ModelSettings {
  return {
    llmProvider: provider,
    llmBaseUrl: provider === 'ollama' ? model.url : model.openaiUrl,
    llmModel: 'qwen2.5-coder:7b',
    llmApiKey: '',
    llmTemperature: 0.3,
    llmNumCtx: 32_768,
    llmTimeoutSeconds: 10,
    retryMaxAttempts: 3,
    retryBaseDelay: 0.001,
    retryMaxDelay: 0.001,
    ...overrides,
  };
}
