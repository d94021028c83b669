import { estimateTokens, textOf, type Answer, type WireToolCall } from './answer.js';
import type { Protocol } from './recording.js';
import type { Chunk } from './turns.js';

export interface WriteContext {
  model: string;
  requestIndex: number;
  promptTokens: number;
  body: Record<string, unknown>;
  /** False for a runtime that reports no token counts. */
  usage: boolean;
}

/** A piece of a streamed body, or a hold or pause between pieces. */
export type Frame = Chunk;

/** How one protocol writes answers and errors. */
export interface ProtocolWriter {
  streamContentType: string;
  json(answer: Answer, context: WriteContext): unknown;
  /** The complete stream, holds and pauses in place. */
  frames(answer: Answer, context: WriteContext): Frame[];
  /** Text pieces only, no ending: what a dropped stream managed to send. */
  partialFrames(chunks: readonly string[], context: WriteContext): Frame[];
  errorBody(status: number, message: string): unknown;
  /** How the runtime reports a failure after the stream has started. */
  streamErrorFrame(message: string): string;
  modelNotFound(model: string): unknown;
}

const completionTokens = (answer: Answer): number =>
  estimateTokens(textOf(answer.chunks) + answer.toolCalls.map((c) => c.name + c.argumentsText).join(''));

/** Ollama parses calls itself; one it cannot parse stays in the text, so that is where a malformed one goes. */
function ollamaSplit(answer: Answer): { chunks: Chunk[]; calls: WireToolCall[] } {
  const broken = answer.toolCalls.filter((c) => c.argumentsObject === undefined);
  const asText = broken.map((c) => `{"name": ${JSON.stringify(c.name)}, "arguments": ${c.argumentsText}}`);
  return {
    chunks: asText.length > 0 ? [...answer.chunks, asText.join('\n')] : answer.chunks,
    calls: answer.toolCalls.filter((c) => c.argumentsObject !== undefined),
  };
}

const ollamaCall = (call: WireToolCall, index: number): unknown => ({
  id: call.id,
  function: { index, name: call.name, arguments: call.argumentsObject },
});

function ollamaLine(context: WriteContext, message: Record<string, unknown>, done: boolean): Record<string, unknown> {
  return { model: context.model, created_at: new Date().toISOString(), message: { role: 'assistant', ...message }, done };
}

function ollamaStats(answer: Answer, context: WriteContext): Record<string, unknown> {
  const counts = context.usage ? { prompt_eval_count: context.promptTokens, eval_count: completionTokens(answer) } : {};
  return { done_reason: 'stop', total_duration: 1_000_000, load_duration: 100_000, prompt_eval_duration: 200_000, eval_duration: 700_000, ...counts };
}

const ndjson = (value: unknown): string => `${JSON.stringify(value)}\n`;

export const ollamaWriter: ProtocolWriter = {
  streamContentType: 'application/x-ndjson',
  json(answer, context) {
    const { chunks, calls } = ollamaSplit(answer);
    const message = { content: textOf(chunks), ...(calls.length > 0 ? { tool_calls: calls.map(ollamaCall) } : {}) };
    return { ...ollamaLine(context, message, true), ...ollamaStats(answer, context) };
  },
  frames(answer, context) {
    const { chunks, calls } = ollamaSplit(answer);
    const frames: Frame[] = [];
    for (const chunk of chunks) frames.push(typeof chunk === 'string' ? ndjson(ollamaLine(context, { content: chunk }, false)) : chunk);
    if (calls.length > 0) frames.push(ndjson(ollamaLine(context, { content: '', tool_calls: calls.map(ollamaCall) }, false)));
    frames.push(ndjson({ ...ollamaLine(context, { content: '' }, true), ...ollamaStats(answer, context) }));
    return frames;
  },
  partialFrames(chunks, context) {
    return chunks.map((chunk) => ndjson(ollamaLine(context, { content: chunk }, false)));
  },
  errorBody: (_status, message) => ({ error: message }),
  streamErrorFrame: (message) => ndjson({ error: message }),
  modelNotFound: (model) => ({ error: `model "${model}" not found, try pulling it first` }),
};

const openaiCall = (call: WireToolCall): unknown => ({
  id: call.id,
  type: 'function',
  function: { name: call.name, arguments: call.argumentsText },
});

function openaiUsage(answer: Answer, context: WriteContext): Record<string, number> {
  const completion = completionTokens(answer);
  return { prompt_tokens: context.promptTokens, completion_tokens: completion, total_tokens: context.promptTokens + completion };
}

const finishReason = (answer: Answer): string => (answer.toolCalls.length > 0 ? 'tool_calls' : 'stop');

function openaiChunk(context: WriteContext, choice: Record<string, unknown> | undefined, extra: Record<string, unknown> = {}): string {
  const value = {
    id: `chatcmpl-scripted-${context.requestIndex}`,
    object: 'chat.completion.chunk',
    created: Math.floor(Date.now() / 1000),
    model: context.model,
    choices: choice === undefined ? [] : [{ index: 0, finish_reason: null, ...choice }],
    ...extra,
  };
  return `data: ${JSON.stringify(value)}\n\n`;
}

/** A call as real servers stream it: id and name first, then the arguments in fragments. */
function toolCallFrames(call: WireToolCall, index: number, context: WriteContext): string[] {
  const head = { index, id: call.id, type: 'function', function: { name: call.name, arguments: '' } };
  const middle = Math.ceil(call.argumentsText.length / 2);
  const fragments = [call.argumentsText.slice(0, middle), call.argumentsText.slice(middle)].filter((f) => f !== '');
  return [
    openaiChunk(context, { delta: { tool_calls: [head] } }),
    ...fragments.map((fragment) => openaiChunk(context, { delta: { tool_calls: [{ index, function: { arguments: fragment } }] } })),
  ];
}

const wantsUsage = (body: Record<string, unknown>): boolean => {
  const options = body.stream_options;
  return typeof options === 'object' && options !== null && (options as { include_usage?: unknown }).include_usage === true;
};

export const openaiWriter: ProtocolWriter = {
  streamContentType: 'text/event-stream',
  json(answer, context) {
    const text = textOf(answer.chunks);
    const calls = answer.toolCalls;
    return {
      id: `chatcmpl-scripted-${context.requestIndex}`,
      object: 'chat.completion',
      created: Math.floor(Date.now() / 1000),
      model: context.model,
      choices: [
        {
          index: 0,
          message: { role: 'assistant', content: calls.length > 0 && text === '' ? null : text, ...(calls.length > 0 ? { tool_calls: calls.map(openaiCall) } : {}) },
          finish_reason: finishReason(answer),
        },
      ],
      ...(context.usage ? { usage: openaiUsage(answer, context) } : {}),
    };
  },
  frames(answer, context) {
    const frames = this.partialFrames([], context);
    for (const chunk of answer.chunks) frames.push(typeof chunk === 'string' ? openaiChunk(context, { delta: { content: chunk } }) : chunk);
    answer.toolCalls.forEach((call, index) => frames.push(...toolCallFrames(call, index, context)));
    frames.push(openaiChunk(context, { delta: {}, finish_reason: finishReason(answer) }));
    if (context.usage && wantsUsage(context.body)) frames.push(openaiChunk(context, undefined, { usage: openaiUsage(answer, context) }));
    frames.push('data: [DONE]\n\n');
    return frames;
  },
  partialFrames(chunks, context) {
    return [openaiChunk(context, { delta: { role: 'assistant', content: '' } }), ...chunks.map((chunk) => openaiChunk(context, { delta: { content: chunk } }))];
  },
  errorBody: (status, message) => ({ error: { message, type: status >= 500 ? 'server_error' : 'invalid_request_error', code: status } }),
  streamErrorFrame: (message) => `data: ${JSON.stringify({ error: { message, type: 'server_error', code: 500 } })}\n\n`,
  modelNotFound: (model) => ({ error: { message: `The model \`${model}\` does not exist.`, type: 'NotFoundError', code: 'model_not_found' } }),
};

export const writers: Record<Protocol, ProtocolWriter> = { ollama: ollamaWriter, openai: openaiWriter };
