import type { Chunk, ScriptedToolCall, ScriptedTurn, TextToolCallForm } from './turns.js';

export interface WireToolCall {
  id: string;
  name: string;
  /** The JSON text of the arguments (verbatim for scripted malformed arguments). */
  argumentsText: string;
  /** Undefined when the scripted arguments are not a JSON object. */
  argumentsObject: Record<string, unknown> | undefined;
}

/** What a successful turn says, before it is written in either protocol. */
export interface Answer {
  chunks: Chunk[];
  toolCalls: WireToolCall[];
}

export type AnswerTurn = Extract<ScriptedTurn, { kind: 'text' | 'tool-calls' | 'text-tool-calls' }>;

export const textOf = (chunks: readonly Chunk[]): string => chunks.filter((c): c is string => typeof c === 'string').join('');

function wireCall(call: ScriptedToolCall, requestIndex: number, position: number): WireToolCall {
  const id = call.id ?? `call_${requestIndex}_${position}`;
  if (call.rawArguments !== undefined) {
    return { id, name: call.name, argumentsText: call.rawArguments, argumentsObject: undefined };
  }
  const args = call.arguments ?? {};
  return { id, name: call.name, argumentsText: JSON.stringify(args), argumentsObject: args };
}

/** The way local models write a call into their text; `arguments` stays verbatim when malformed. */
export function renderCallAsText(call: ScriptedToolCall, indent = false): string {
  if (call.rawArguments !== undefined) return `{"name": ${JSON.stringify(call.name)}, "arguments": ${call.rawArguments}}`;
  return JSON.stringify({ name: call.name, arguments: call.arguments ?? {} }, null, indent ? 2 : undefined);
}

const argumentsText = (call: ScriptedToolCall): string => call.rawArguments ?? JSON.stringify(call.arguments ?? {});

/** DeepSeek's markers: full-width bars and U+2581 for spaces, as its tokenizer writes them. */
const ds = (words: string): string => `<\uFF5C${words.split(' ').join('\u2581')}\uFF5C>`;

function renderTextCalls(form: TextToolCallForm, calls: readonly ScriptedToolCall[]): string {
  switch (form) {
    case 'llama-function':
      return calls.map((call) => `<function=${call.name}>${argumentsText(call)}</function>`).join('\n');
    case 'python-tag':
      return `<|python_tag|>${calls.map((call) => `{"name": ${JSON.stringify(call.name)}, "parameters": ${argumentsText(call)}}`).join('; ')}<|eom_id|>`;
    case 'mistral':
      return `[TOOL_CALLS][${calls.map((call) => renderCallAsText(call)).join(', ')}]`;
    case 'deepseek':
      return `${ds('tool calls begin')}${calls
        .map((call) => `${ds('tool call begin')}function${ds('tool sep')}${call.name}\n\`\`\`json\n${argumentsText(call)}\n\`\`\`${ds('tool call end')}`)
        .join('\n')}${ds('tool calls end')}`;
    case 'gpt-oss':
      return calls
        .map((call) => `<|start|>assistant<|channel|>commentary to=functions.${call.name} <|constrain|>json<|message|>${argumentsText(call)}<|call|>`)
        .join('');
    case 'json':
      return calls.map((call) => renderCallAsText(call)).join('\n');
    case 'fenced':
      return calls.map((call) => `\`\`\`json\n${renderCallAsText(call, true)}\n\`\`\``).join('\n\n');
    case 'tagged':
      return calls.map((call) => `<tool_call>\n${renderCallAsText(call)}\n</tool_call>`).join('\n');
  }
}

function splitForStreaming(text: string): string[] {
  // Several pieces, so a client that only recognises whole text must assemble them first.
  const size = Math.max(8, Math.ceil(text.length / 4));
  const pieces: string[] = [];
  for (let at = 0; at < text.length; at += size) pieces.push(text.slice(at, at + size));
  return pieces;
}

export function answerFor(turn: AnswerTurn, requestIndex: number): Answer {
  switch (turn.kind) {
    case 'text':
      return { chunks: turn.chunks, toolCalls: [] };
    case 'tool-calls':
      return {
        chunks: turn.text === undefined || turn.text === '' ? [] : [turn.text],
        toolCalls: turn.calls.map((call, position) => wireCall(call, requestIndex, position)),
      };
    case 'text-tool-calls': {
      const parts = [turn.before, renderTextCalls(turn.form, turn.calls), turn.after].filter((p): p is string => p !== undefined && p !== '');
      return { chunks: splitForStreaming(parts.join('\n\n')), toolCalls: [] };
    }
  }
}

/** A rough token count, enough for usage fields to be plausible and non-zero. */
export const estimateTokens = (text: string): number => Math.max(1, Math.ceil(text.length / 4));
