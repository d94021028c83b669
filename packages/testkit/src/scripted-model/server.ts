import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { estimateTokens } from './answer.js';
import { Exchange } from './exchange.js';
import { writers } from './protocols.js';
import { isRecord, recordRequest, type Protocol, type RecordedRequest } from './recording.js';
import type { ScriptStep, ScriptedTurn } from './turns.js';

export interface ScriptedModelOptions {
  /** The script: one step per chat request, in order. More can be pushed later. */
  turns?: ScriptStep[];
  /** When set, a request for any other model gets the runtime's own 404 (and uses no turn). */
  models?: string[];
  /** For benchmarks: each streamed answer is written in one piece, without yielding between frames. */
  zeroLatency?: boolean;
  /** Listen on this port of 127.0.0.1 (a runtime restarted where the service expects it); default any free port. */
  port?: number;
  /** What the runtime says of its model (`/api/show`, `/v1/models`, `/props`) and how it behaves. */
  runtime?: ScriptedRuntime;
  /**
   * Per model name, what the runtime says of that model and how it behaves with it, in place of
   * `runtime` (a runtime serving a large model with native tools beside a small text-only one).
   */
  runtimes?: Record<string, ScriptedRuntime>;
}

export interface ScriptedRuntime {
  /** Ollama `/api/show`: `model_info["<architecture>.context_length"]`. */
  contextLength?: number;
  /** Default `llama`. */
  architecture?: string;
  /** Ollama `/api/show` `capabilities`; absent: the field is left out, as older Ollama does. */
  capabilities?: string[];
  /** vLLM: `max_model_len` on each `/v1/models` entry. */
  maxModelLen?: number;
  /** llama.cpp: `/props` `default_generation_settings.n_ctx`; absent: `/props` answers 404. */
  nCtx?: number;
  /** A request with `tools` gets the runtime's 400 for a model without tool support (no turn used). */
  refuseTools?: boolean;
  /** False: answers carry no token counts (no `usage`, no `prompt_eval_count`/`eval_count`). */
  usage?: boolean;
}

export interface ScriptedModel {
  /** Base URL as LLM_BASE_URL gives it for `ollama`. */
  readonly url: string;
  /** Base URL as LLM_BASE_URL gives it for `openai` (with `/v1`). */
  readonly openaiUrl: string;
  /** Every chat request received so far, in order. */
  readonly requests: readonly RecordedRequest[];
  /** Turns not used yet. */
  readonly remaining: number;
  /** Paths of the introspection requests received (`/api/show`, `/v1/models`, `/props`), in order. */
  readonly introspections: readonly string[];
  push(...steps: ScriptStep[]): void;
  /** The runtime no longer has (or now has) these models: chat and `/api/show` answer its 404 for any other. */
  serveModels(names: string[]): void;
  close(): Promise<void>;
}

const CHAT_PATHS: Record<string, Protocol> = { '/api/chat': 'ollama', '/v1/chat/completions': 'openai' };
const DEFAULT_MODEL = 'scripted-model';

async function readBody(request: IncomingMessage): Promise<string> {
  const parts: Buffer[] = [];
  for await (const part of request) parts.push(part as Buffer);
  return Buffer.concat(parts).toString('utf8');
}

function parseObject(text: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(text);
    return isRecord(value) ? value : undefined;
  } catch {
    return undefined;
  }
}

function listModels(path: string, names: readonly string[], runtimeOf: (model: string) => ScriptedRuntime): unknown {
  if (path === '/api/tags') {
    return { models: names.map((name) => ({ name, model: name, modified_at: new Date(0).toISOString(), size: 0, digest: 'scripted', details: {} })) };
  }
  const length = (id: string): object => {
    const maxModelLen = runtimeOf(id).maxModelLen;
    return maxModelLen === undefined ? {} : { max_model_len: maxModelLen };
  };
  return { object: 'list', data: names.map((id) => ({ id, object: 'model', created: 0, owned_by: 'scripted', ...length(id) })) };
}

function showModel(runtime: ScriptedRuntime): unknown {
  const architecture = runtime.architecture ?? 'llama';
  return {
    details: { format: 'gguf', family: architecture },
    model_info: {
      'general.architecture': architecture,
      ...(runtime.contextLength === undefined ? {} : { [`${architecture}.context_length`]: runtime.contextLength }),
    },
    ...(runtime.capabilities === undefined ? {} : { capabilities: runtime.capabilities }),
  };
}

const REFUSALS: Record<Protocol, (model: string) => string> = {
  ollama: (model) => `registry.ollama.ai/library/${model} does not support tools`,
  openai: () => '"auto" tool choice requires --enable-auto-tool-choice and --tool-call-parser to be set',
};

/**
 * A model runtime for tests: a real HTTP server on 127.0.0.1 speaking Ollama's `POST /api/chat`
 * (JSON or NDJSON stream) and OpenAI's `POST /v1/chat/completions` (JSON or SSE), plus
 * `GET /api/tags` and `GET /v1/models`. Each chat request takes the next turn of the script and
 * is recorded, so a test can assert what the model was sent. When the script runs out the
 * answer is a 500 whose body says so, which makes an under-scripted test fail loudly.
 *
 * @example
 * const model = await startScriptedModel({
 *   turns: [
 *     scripted.toolCalls({ name: 'read_file', arguments: { file_path: '/w/a.ts' } }),
 *     (request) => scripted.text(`saw ${request.messages.length} messages`),
 *     scripted.httpError(503),
 *     scripted.chunks('Hel', scripted.until(released), 'lo'),
 *   ],
 * });
 * // LLM_BASE_URL = model.url (ollama) or model.openaiUrl (openai)
 * expect(model.requests[0]?.tools.map((t) => t.name)).toContain('read_file');
 * await model.close();
 */
export async function startScriptedModel(options: ScriptedModelOptions = {}): Promise<ScriptedModel> {
  const steps: ScriptStep[] = [...(options.turns ?? [])];
  const requests: RecordedRequest[] = [];
  const introspections: string[] = [];
  const runtimeOf = (model: string): ScriptedRuntime => options.runtimes?.[model] ?? options.runtime ?? {};
  let served = options.models;
  // As Ollama does, an untagged name is the model's `:latest` tag.
  const tagged = (model: string): string => (model.includes(':') ? model : `${model}:latest`);
  const serves = (model: string): boolean => served === undefined || served.some((name) => tagged(name) === tagged(model));
  let scriptedCount = steps.length;
  let closing = false;

  async function nextTurn(request: RecordedRequest): Promise<ScriptedTurn | undefined> {
    const step = steps.shift();
    return typeof step === 'function' ? step(request) : step;
  }

  async function handleChat(protocol: Protocol, request: IncomingMessage, response: ServerResponse): Promise<void> {
    const writer = writers[protocol];
    const exchange = new Exchange(request, response, writer, { zeroLatency: options.zeroLatency === true, serverClosing: () => closing });
    const body = parseObject(await readBody(request));
    if (body === undefined) return exchange.sendJson(400, writer.errorBody(400, 'scripted model: the request body is not a JSON object'));
    const recorded = recordRequest({ index: requests.length, protocol, path: request.url ?? '', headers: request.headers, body, outcome: exchange.outcome });
    requests.push(recorded);
    const model = recorded.model ?? DEFAULT_MODEL;
    if (!serves(model)) return exchange.sendJson(404, writer.modelNotFound(model));
    const runtime = runtimeOf(model);
    if (runtime.refuseTools === true && recorded.tools.length > 0) return exchange.sendJson(400, writer.errorBody(400, REFUSALS[protocol](model)));
    const turn = await nextTurn(recorded);
    if (turn === undefined) {
      const message = `scripted model: script exhausted: request #${recorded.index + 1} (POST ${recorded.path}) has no turn left; ${scriptedCount} turn(s) were scripted`;
      return exchange.sendJson(500, writer.errorBody(500, message));
    }
    const context = { model, requestIndex: recorded.index, promptTokens: estimateTokens(JSON.stringify(body.messages ?? [])), body, usage: runtime.usage !== false };
    await exchange.play(turn, context, recorded.stream);
  }

  function route(request: IncomingMessage, response: ServerResponse): Promise<void> | void {
    const path = (request.url ?? '/').split('?')[0] ?? '/';
    const protocol = CHAT_PATHS[path];
    if (request.method === 'POST' && protocol !== undefined) return handleChat(protocol, request, response);
    const json = (status: number, body: unknown): void => {
      response.writeHead(status, { 'content-type': 'application/json; charset=utf-8' });
      response.end(JSON.stringify(body));
    };
    if (request.method === 'GET' && (path === '/api/tags' || path === '/v1/models')) {
      if (path === '/v1/models') introspections.push(path);
      return json(200, listModels(path, served ?? [DEFAULT_MODEL], runtimeOf));
    }
    if (request.method === 'POST' && path === '/api/show') {
      introspections.push(path);
      return readBody(request).then((text) => {
        const model = parseObject(text)?.model;
        const name = typeof model === 'string' ? model : DEFAULT_MODEL;
        // Ollama's own answer for a model it does not have.
        if (!serves(name)) return json(404, { error: `model '${name}' not found` });
        json(200, showModel(runtimeOf(name)));
      });
    }
    if (request.method === 'GET' && path === '/props') {
      introspections.push(path);
      const runtime = options.runtime ?? {};
      return runtime.nCtx === undefined ? json(404, { error: 'scripted model: no /props' }) : json(200, { default_generation_settings: { n_ctx: runtime.nCtx } });
    }
    if (request.method === 'GET' && path === '/') return void response.end('Ollama is running');
    json(404, { error: `scripted model: no route ${request.method ?? ''} ${path}` });
  }

  const server = createServer((request, response) => {
    Promise.resolve(route(request, response)).catch((error: unknown) => {
      if (!response.headersSent) response.writeHead(500, { 'content-type': 'application/json; charset=utf-8' });
      response.end(JSON.stringify({ error: `scripted model: ${error instanceof Error ? error.message : String(error)}` }));
    });
  });
  await new Promise<void>((resolve) => server.listen(options.port ?? 0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const url = `http://127.0.0.1:${port}`;

  return {
    url,
    openaiUrl: `${url}/v1`,
    requests,
    get remaining() {
      return steps.length;
    },
    introspections,
    push(...more) {
      steps.push(...more);
      scriptedCount += more.length;
    },
    serveModels(names) {
      served = [...names];
    },
    async close() {
      closing = true;
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
      await closed;
    },
  };
}
