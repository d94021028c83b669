import { cachedProbe, type Probe } from './probes.js';

/** A model listing larger than this is not read: the runtime is a dependency, not trusted input. */
const MAX_LISTING_BYTES = 1024 * 1024;

export interface RuntimeProbeSettings {
  llmProvider: 'ollama' | 'openai';
  llmBaseUrl: string;
  llmModel: string;
  /** Every configured model (LLM_MODELS, the default first): `model` covers them all. */
  llmModels: readonly string[];
  llmApiKey: string;
}

interface Listing {
  /** The server answered HTTP at all (any status under 500). */
  reachable: boolean;
  /** The names of the models it serves; absent when it did not list them in a form known here. */
  names?: string[];
}

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/** The body as text, or undefined past `limit` bytes (read no further). */
async function readLimited(response: Response, limit: number): Promise<string | undefined> {
  if (response.body === null) return '';
  const parts: Uint8Array[] = [];
  let size = 0;
  for await (const part of response.body) {
    size += part.byteLength;
    if (size > limit) {
      await response.body.cancel().catch(() => undefined);
      return undefined;
    }
    parts.push(part);
  }
  return Buffer.concat(parts).toString('utf8');
}

/** Ollama `/api/tags`: `models[].name` (and `.model`); OpenAI-compatible `/models`: `data[].id`. */
export function listedNames(provider: RuntimeProbeSettings['llmProvider'], body: unknown): string[] | undefined {
  const entries = isRecord(body) ? (provider === 'ollama' ? body.models : body.data) : undefined;
  if (!Array.isArray(entries)) return undefined;
  const keys = provider === 'ollama' ? ['name', 'model'] : ['id'];
  return entries.flatMap((entry) => (isRecord(entry) ? keys.map((key) => entry[key]).filter((name): name is string => typeof name === 'string') : []));
}

/**
 * Whether `model` is among `names`. Ollama names a model without a tag by its `:latest` one.
 * llama.cpp serves the one model it was started with under a name of its own and answers
 * whatever name a request gives, so one model listed under another name is not called missing.
 */
export function modelListed(settings: Pick<RuntimeProbeSettings, 'llmProvider' | 'llmModel'>, names: string[]): boolean {
  const wanted = settings.llmModel;
  if (settings.llmProvider === 'ollama') return names.some((name) => name === wanted || (!wanted.includes(':') && name === `${wanted}:latest`));
  return names.includes(wanted) || new Set(names).size === 1;
}

/** The probes of the model runtime for GET /health, and the models its listing lacks. */
export interface RuntimeProbes {
  model_runtime: Probe;
  model: Probe;
  /** The configured models the runtime's listing does not name; undefined when it gave no listing. */
  unlisted(): Promise<string[] | undefined>;
}

/**
 * `model_runtime` (`ok`, `unreachable`) and `model` (`ok` when the runtime lists every configured
 * model, `missing` when it lacks one, `unknown` when it did not answer or did not list its models)
 * for GET /health, from one request to the runtime's model listing, shared by all three.
 */
export function runtimeProbes(settings: RuntimeProbeSettings, timeoutMs = 2000): RuntimeProbes {
  const url = settings.llmProvider === 'ollama' ? `${settings.llmBaseUrl}/api/tags` : `${settings.llmBaseUrl}/models`;
  const headers: Record<string, string> = settings.llmApiKey ? { authorization: `Bearer ${settings.llmApiKey}` } : {};
  const listing = cachedProbe(async (): Promise<Listing> => {
    try {
      const response = await fetch(url, { signal: AbortSignal.timeout(timeoutMs), headers });
      if (!response.ok) {
        await response.body?.cancel();
        return { reachable: response.status < 500 };
      }
      const text = await readLimited(response, MAX_LISTING_BYTES);
      const names = text === undefined ? undefined : listedNames(settings.llmProvider, parseJson(text));
      return names === undefined ? { reachable: true } : { reachable: true, names };
    } catch {
      return { reachable: false };
    }
  });
  const configured = settings.llmModels.length > 0 ? settings.llmModels : [settings.llmModel];
  const unlisted = async (): Promise<string[] | undefined> => {
    const { names } = await listing();
    return names === undefined ? undefined : configured.filter((model) => !modelListed({ llmProvider: settings.llmProvider, llmModel: model }, names));
  };
  return {
    model_runtime: async () => ((await listing()).reachable ? 'ok' : 'unreachable'),
    model: async () => {
      const lacking = await unlisted();
      if (lacking === undefined) return 'unknown';
      return lacking.length === 0 ? 'ok' : 'missing';
    },
    unlisted,
  };
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}
