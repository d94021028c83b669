import type { ModelSettings } from './create-model-client.js';
import type { ToolCallMode } from './runtime-info.js';

/** What one look at the runtime found; absent fields were not reported. */
export interface RuntimeReport {
  /** Every window the runtime reported (the model's, the server's); the smallest counts. */
  contextLengths: number[];
  toolCalls?: ToolCallMode;
}

type Fetch = typeof fetch;

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);
const positive = (value: unknown): number | undefined => (typeof value === 'number' && Number.isInteger(value) && value > 0 ? value : undefined);

async function getJson(doFetch: Fetch, url: string, init: RequestInit): Promise<unknown> {
  const response = await doFetch(url, init);
  if (!response.ok) {
    await response.body?.cancel();
    return undefined;
  }
  try {
    return (await response.json()) as unknown;
  } catch {
    return undefined;
  }
}

/** `model_info["<architecture>.context_length"]`, and `capabilities` when Ollama lists them. */
export function readOllamaShow(body: unknown): RuntimeReport {
  if (!isRecord(body)) return { contextLengths: [] };
  const info = isRecord(body.model_info) ? body.model_info : {};
  const architecture = info['general.architecture'];
  const named = typeof architecture === 'string' ? positive(info[`${architecture}.context_length`]) : undefined;
  const anyLength = Object.entries(info).find(([key, value]) => key.endsWith('.context_length') && positive(value) !== undefined)?.[1];
  const length = named ?? positive(anyLength);
  const capabilities = Array.isArray(body.capabilities) ? body.capabilities.filter((c): c is string => typeof c === 'string') : undefined;
  return {
    contextLengths: length === undefined ? [] : [length],
    ...(capabilities === undefined ? {} : { toolCalls: capabilities.includes('tools') ? 'native' : 'text' }),
  };
}

/** vLLM's `max_model_len` on the model's entry of `/v1/models`. */
export function readOpenAiModels(body: unknown, model: string): number | undefined {
  const data = isRecord(body) && Array.isArray(body.data) ? body.data : [];
  const entry = data.find((item) => isRecord(item) && item.id === model) ?? (data.length === 1 ? data[0] : undefined);
  return isRecord(entry) ? positive(entry.max_model_len) : undefined;
}

/** llama.cpp's `/props`: the server's real window, `default_generation_settings.n_ctx`. */
export function readLlamaCppProps(body: unknown): number | undefined {
  const settings = isRecord(body) && isRecord(body.default_generation_settings) ? body.default_generation_settings : undefined;
  return settings === undefined ? undefined : positive(settings.n_ctx);
}

/** The server root of an OpenAI-compatible base URL: llama.cpp serves `/props` beside `/v1`. */
const serverRoot = (baseUrl: string): string => baseUrl.replace(/\/v1\/?$/, '');

/**
 * Asks the runtime about the model. Throws when the runtime cannot be reached at all, so the
 * caller keeps what it knew and asks again later.
 */
export async function introspectRuntime(settings: ModelSettings, signal: AbortSignal, doFetch: Fetch = fetch): Promise<RuntimeReport> {
  const headers: Record<string, string> = { 'content-type': 'application/json', ...(settings.llmApiKey === '' ? {} : { authorization: `Bearer ${settings.llmApiKey}` }) };
  if (settings.llmProvider === 'ollama') {
    const body = await getJson(doFetch, `${settings.llmBaseUrl}/api/show`, { method: 'POST', headers, body: JSON.stringify({ model: settings.llmModel }), signal });
    return readOllamaShow(body);
  }
  const models = await getJson(doFetch, `${settings.llmBaseUrl}/models`, { headers, signal });
  const props = await getJson(doFetch, `${serverRoot(settings.llmBaseUrl)}/props`, { headers, signal }).catch(() => undefined);
  const lengths = [readOpenAiModels(models, settings.llmModel), readLlamaCppProps(props)].filter((n): n is number => n !== undefined);
  return { contextLengths: lengths };
}
