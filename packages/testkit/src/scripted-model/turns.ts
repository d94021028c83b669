import type { RecordedRequest } from './recording.js';

/** Holds a stream (or a whole answer) until the promise settles: lets a test observe what arrived so far. */
export interface Hold {
  until: Promise<unknown>;
}

/** Waits before the next chunk, to simulate a slow model. */
export interface Pause {
  pauseMs: number;
}

/** A piece of streamed text, or a wait between pieces. Waits are honoured in non-streaming answers too. */
export type Chunk = string | Hold | Pause;

export interface ScriptedToolCall {
  name: string;
  /** Sent as structured arguments. */
  arguments?: Record<string, unknown>;
  /** Sent verbatim instead of `arguments` (OpenAI protocol): use it for arguments that are not valid JSON. */
  rawArguments?: string;
  /** Default: `call_<request>_<position>`. */
  id?: string;
}

/**
 * How a model that does not use structured tool calls writes them into its text: a bare JSON
 * object per line, a ```json block each, `<tool_call>` tags (Qwen, Hermes), `<function=NAME>`
 * (Llama 3.x), `<|python_tag|>` (Llama 3.1), `[TOOL_CALLS]` (Mistral), DeepSeek's markers, or
 * gpt-oss's `to=functions.NAME` channel.
 */
export type TextToolCallForm = 'json' | 'fenced' | 'tagged' | 'llama-function' | 'python-tag' | 'mistral' | 'deepseek' | 'gpt-oss';

export type ScriptedTurn =
  /** Plain text; streamed in the given chunks (default: word by word). */
  | { kind: 'text'; chunks: Chunk[] }
  /** Structured tool calls, optionally after some text. Unknown tool names are sent as they are. */
  | { kind: 'tool-calls'; calls: ScriptedToolCall[]; text?: string }
  /** Tool calls written as text in one of the dialects of TextToolCallForm. */
  | { kind: 'text-tool-calls'; form: TextToolCallForm; calls: ScriptedToolCall[]; before?: string; after?: string }
  /** An HTTP error with the protocol's error body. */
  | { kind: 'http-error'; status: number; message?: string }
  /** Never answers: the request stays open until the client or the server closes it. */
  | { kind: 'stall' }
  /** Answers `then` after `delayMs`. */
  | { kind: 'delayed'; delayMs: number; then: ScriptedTurn }
  /**
   * Streams `chunks`, then reports an error inside the stream and ends it cleanly, as runtimes do
   * when generation fails after the answer has started (Ollama: an `{"error"}` line; vLLM: an
   * SSE error event). A non-streaming request gets an HTTP 500 instead.
   */
  | { kind: 'stream-error'; chunks: string[]; message: string }
  /**
   * Destroys the connection: before any answer when `chunks` is empty, otherwise after streaming
   * them (or after part of the JSON body, for a non-streaming request).
   */
  | { kind: 'drop'; chunks: string[] };

/** A turn, or a function of the request that chooses one (for tests that react to what was sent). */
export type ScriptStep = ScriptedTurn | ((request: RecordedRequest) => ScriptedTurn | Promise<ScriptedTurn>);

/** Builders for the turns of a script; plain objects of type ScriptedTurn work too. */
export const scripted = {
  /** Text streamed word by word. */
  text: (text: string): ScriptedTurn => ({ kind: 'text', chunks: splitWords(text) }),
  /** Text streamed in exactly these pieces, with optional holds and pauses between them. */
  chunks: (...chunks: Chunk[]): ScriptedTurn => ({ kind: 'text', chunks }),
  toolCalls: (...calls: ScriptedToolCall[]): ScriptedTurn => ({ kind: 'tool-calls', calls }),
  toolCallsAfterText: (text: string, ...calls: ScriptedToolCall[]): ScriptedTurn => ({ kind: 'tool-calls', calls, text }),
  /**
   * A structured call whose arguments are not valid JSON. Real Ollama cannot send that (its parser
   * leaves such a call in the text), so on /api/chat the broken call is sent as text content.
   */
  malformedArguments: (name: string, rawArguments: string): ScriptedTurn => ({ kind: 'tool-calls', calls: [{ name, rawArguments }] }),
  textToolCalls: (form: TextToolCallForm, calls: ScriptedToolCall[], around: { before?: string; after?: string } = {}): ScriptedTurn => ({
    kind: 'text-tool-calls',
    form,
    calls,
    ...around,
  }),
  httpError: (status: number, message?: string): ScriptedTurn => ({ kind: 'http-error', status, ...(message === undefined ? {} : { message }) }),
  stall: (): ScriptedTurn => ({ kind: 'stall' }),
  delayed: (delayMs: number, then: ScriptedTurn): ScriptedTurn => ({ kind: 'delayed', delayMs, then }),
  streamError: (message: string, ...chunks: string[]): ScriptedTurn => ({ kind: 'stream-error', chunks, message }),
  drop: (...chunks: string[]): ScriptedTurn => ({ kind: 'drop', chunks }),
  /** A chunk-list item that holds the stream until `promise` settles. */
  until: (promise: Promise<unknown>): Hold => ({ until: promise }),
  /** A chunk-list item that waits `ms` before the next chunk. */
  pause: (ms: number): Pause => ({ pauseMs: ms }),
};

function splitWords(text: string): string[] {
  return text.match(/\s*\S+\s*/g) ?? [text];
}
