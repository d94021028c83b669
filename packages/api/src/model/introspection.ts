import type { ModelSettings } from './create-model-client.js';
import { errorBodyExcerpt } from './errors.js';
import type { ToolCallMode } from './runtime-info.js';

/** What one look at the runtime found; absent fields were not reported. */
export interface RuntimeReport {
  /** Every window the runtime reported (the model's, the server's); the smallest counts. */
  contextLengths: number[];
  toolCalls?: ToolCallMode;
  /** The runtime answered that it does not have the model: its own words. */
  missing?: string;
}

type Fetch = typeof fetch;

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);
const positive = (value: unknown): number | undefined => (typeof value === 'number' && Number.isInteger(value) && value > 0 ? value : undefined);

/** Bytes of a 404's body read for the runtime's reason: it is shown on /health, never more. */
const MAX_REASON_BYTES = 4096;

async function getJson(doFetch: Fetch, url: string, init: RequestInit): Promise<unknown> {
  return (await getAnswer(doFetch, url, init)).body;
}

/** The JSON body of a 2xx answer; for a 404, the runtime's reason. */
async function getAnswer(doFetch: Fetch, url: string, init: RequestInit): Promise<{ body?: unknown; notFound?: string }> {
  const response = await doFetch(url, init);
  if (response.status === 404) return { notFound: errorBodyExcerpt(await boundedText(response)) };
  if (!response.ok) {
    await response.body?.cancel();
    return {};
  }
  try {
    return { body: (await response.json()) as unknown };
  } catch {
    return {};
  }
}

async function boundedText(response: Response): Promise<string> {
  const reader = response.body?.getReader();
  if (reader === undefined) return '';
  const parts: Uint8Array[] = [];
  let size = 0;
  for (let next = await reader.read(); !next.done; next = await reader.read()) {
    parts.push(next.value);
    size += next.value.byteLength;
    if (size >= MAX_REASON_BYTES) {
      await reader.cancel();
      break;
    }
  }
  return Buffer.concat(parts).subarray(0, MAX_REASON_BYTES).toString('utf8');
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

/**
 * A `/v1/models` of several models, none of them this one. A runtime listing one model is not
 * taken at its word: llama.cpp lists its one model under its file name and serves it by any name.
 */
function listsOthersOnly(body: unknown, model: string): boolean {
  const data = isRecord(body) && Array.isArray(body.data) ? body.data : [];
  return data.length > 1 && !data.some((item) => isRecord(item) && item.id === model);
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
    const show = await getAnswer(doFetch, `${settings.llmBaseUrl}/api/show`, { method: 'POST', headers, body: JSON.stringify({ model: settings.llmModel }), signal });
    if (show.notFound !== undefined) return { contextLengths: [], missing: show.notFound };
    return readOllamaShow(show.body);
  }
  const models = await getJson(doFetch, `${settings.llmBaseUrl}/models`, { headers, signal });
  const props = await getJson(doFetch, `${serverRoot(settings.llmBaseUrl)}/props`, { headers, signal }).catch(() => undefined);
  const lengths = [readOpenAiModels(models, settings.llmModel), readLlamaCppProps(props)].filter((n): n is number => n !== undefined);
  const unlisted = listsOthersOnly(models, settings.llmModel);
  return { contextLengths: lengths, ...(unlisted ? { missing: `The runtime does not list model ${settings.llmModel}` } : {}) };
}
