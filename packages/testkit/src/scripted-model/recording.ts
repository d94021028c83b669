import type { IncomingHttpHeaders } from 'node:http';

export type Protocol = 'ollama' | 'openai';

/** How an exchange ended, seen from the server. */
export type ExchangeOutcome = 'answered' | 'client-closed' | 'dropped' | 'server-closed';

export interface RecordedToolCall {
  id?: string;
  name: string;
  /** An object on Ollama; on OpenAI the JSON text parsed (or the text itself when it is not JSON). */
  arguments: unknown;
}

/** One message as the model received it, the same shape for both protocols. */
export interface RecordedMessage {
  role: string;
  content: string;
  toolCalls?: RecordedToolCall[];
  toolCallId?: string;
  toolName?: string;
}

export interface RecordedTool {
  name: string;
  description?: string;
  parameters: unknown;
}

/** A chat request the server received, parsed for assertions; `body` keeps everything else. */
export interface RecordedRequest {
  /** 0-based position among the chat requests. */
  index: number;
  protocol: Protocol;
  path: string;
  headers: IncomingHttpHeaders;
  body: Record<string, unknown>;
  model: string | undefined;
  stream: boolean;
  messages: RecordedMessage[];
  tools: RecordedTool[];
  /** What the runtime would sample with: Ollama reads only `options.temperature`, OpenAI `temperature`. */
  temperature: number | undefined;
  /** Ollama's `options.num_ctx`. */
  numCtx: number | undefined;
  /** Settles when the exchange ends; 'client-closed' means the client hung up before the answer was complete. */
  outcome: Promise<ExchangeOutcome>;
}

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);
const asString = (value: unknown): string | undefined => (typeof value === 'string' ? value : undefined);
const asNumber = (value: unknown): number | undefined => (typeof value === 'number' ? value : undefined);
const asArray = (value: unknown): unknown[] => (Array.isArray(value) ? value : []);

function parseMaybeJson(value: unknown): unknown {
  if (typeof value !== 'string') return value;
  try {
    return JSON.parse(value) as unknown;
  } catch {
    return value;
  }
}

function recordToolCall(raw: unknown): RecordedToolCall {
  const call = isRecord(raw) ? raw : {};
  const fn = isRecord(call.function) ? call.function : {};
  const id = asString(call.id);
  return { ...(id === undefined ? {} : { id }), name: asString(fn.name) ?? '', arguments: parseMaybeJson(fn.arguments) };
}

/** OpenAI content may be a string, null or an array of text parts. */
function contentText(content: unknown): string {
  if (typeof content === 'string') return content;
  return asArray(content)
    .map((part) => (isRecord(part) ? (asString(part.text) ?? '') : ''))
    .join('');
}

function recordMessage(raw: unknown): RecordedMessage {
  const message = isRecord(raw) ? raw : {};
  const toolCalls = asArray(message.tool_calls).map(recordToolCall);
  const toolCallId = asString(message.tool_call_id);
  const toolName = asString(message.tool_name) ?? asString(message.name);
  return {
    role: asString(message.role) ?? '',
    content: contentText(message.content),
    ...(toolCalls.length > 0 ? { toolCalls } : {}),
    ...(toolCallId === undefined ? {} : { toolCallId }),
    ...(toolName === undefined ? {} : { toolName }),
  };
}

function recordTool(raw: unknown): RecordedTool {
  const tool = isRecord(raw) ? raw : {};
  const fn = isRecord(tool.function) ? tool.function : {};
  const description = asString(fn.description);
  return { name: asString(fn.name) ?? '', ...(description === undefined ? {} : { description }), parameters: fn.parameters };
}

export interface RecordInput {
  index: number;
  protocol: Protocol;
  path: string;
  headers: IncomingHttpHeaders;
  body: Record<string, unknown>;
  outcome: Promise<ExchangeOutcome>;
}

export function recordRequest({ index, protocol, path, headers, body, outcome }: RecordInput): RecordedRequest {
  const options = isRecord(body.options) ? body.options : {};
  return {
    index,
    protocol,
    path,
    headers,
    body,
    model: asString(body.model),
    // Ollama streams unless told otherwise; OpenAI does not.
    stream: protocol === 'ollama' ? body.stream !== false : body.stream === true,
    messages: asArray(body.messages).map(recordMessage),
    tools: asArray(body.tools).map(recordTool),
    temperature: protocol === 'ollama' ? asNumber(options.temperature) : asNumber(body.temperature),
    numCtx: asNumber(options.num_ctx),
    outcome,
  };
}

export { isRecord };
