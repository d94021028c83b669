import type { RunUsage } from '@mada/protocol';
import type { Log } from '../util/log.js';

/** A JSON Schema object (draft 2020-12 as `z.toJSONSchema` writes it) describing a tool's arguments. */
export type JsonSchema = Record<string, unknown>;

/** A tool offered to the model. Build it from a zod schema with `describeTool`. */
export interface ToolDefinition {
  name: string;
  description: string;
  parameters: JsonSchema;
}

/** A tool call as it goes back into the history; a `ModelToolCall` can be passed as it is. */
export interface AssistantToolCall {
  id: string;
  name: string;
  /**
   * Sent as it is when it is a JSON object. Anything else (such as the raw text of malformed
   * arguments) is sent as `{}`: Ollama rejects a request whose history has non-object arguments.
   */
  arguments: unknown;
}

export type ChatMessage =
  | { role: 'system'; content: string }
  | { role: 'user'; content: string }
  | { role: 'assistant'; content: string; toolCalls?: readonly AssistantToolCall[] }
  /** The result of one tool call, as the text the model reads. */
  | { role: 'tool'; toolCallId: string; toolName: string; content: string };

export interface ModelRequest {
  messages: readonly ChatMessage[];
  tools?: readonly ToolDefinition[];
}

/** A structured tool call from the model. Its name is not checked against the tools offered. */
export interface ModelToolCall {
  id: string;
  name: string;
  /** `{}` when the model sent none, or when `argumentsError` is set. */
  arguments: Record<string, unknown>;
  /** The arguments as the model wrote them. */
  rawArguments: string;
  /** Set when the arguments are not a JSON object: what to tell the model instead of running the tool. */
  argumentsError?: string;
}

export type FinishReason = 'stop' | 'length' | 'tool-calls' | 'content-filter' | 'other';

/** A call's part of a run's usage: the token counts as the runtime reported them; undefined when it did not. */
export type ModelUsage = { [K in 'input_tokens' | 'output_tokens']: RunUsage[K] | undefined };

export interface ModelResponse {
  text: string;
  toolCalls: ModelToolCall[];
  finishReason: FinishReason;
  usage: ModelUsage;
}

/**
 * What `stream` yields: text as it arrives, tool calls as they complete (usually after the
 * text), and last a `finish` carrying the whole response, the same as `complete` returns.
 */
export type ModelStreamPart =
  | { type: 'text'; text: string }
  | { type: 'tool-call'; call: ModelToolCall }
  | { type: 'finish'; response: ModelResponse };

/**
 * One model runtime. Failures are thrown as ModelError; when `signal` aborts, its reason is
 * thrown and the HTTP request is closed. Connection errors and 429/5xx answers are retried
 * (RETRY_* settings) as long as nothing has been returned or yielded yet. Each attempt has its
 * own LLM_TIMEOUT_SECONDS, which for a stream covers the whole stream.
 */
export interface ModelClient {
  readonly provider: 'ollama' | 'openai';
  readonly model: string;
  /** `log` is the logger of the work the call is for (a run's carries its run_id): retries are logged there. */
  complete(request: ModelRequest, signal?: AbortSignal, log?: Log): Promise<ModelResponse>;
  stream(request: ModelRequest, signal?: AbortSignal, log?: Log): AsyncIterable<ModelStreamPart>;
}
