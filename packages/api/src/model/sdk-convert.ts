import type { JSONSchema7 } from 'ai';
import type { createOllama } from 'ollama-ai-provider-v2';
import type { ChatMessage, FinishReason, ModelResponse, ModelToolCall, ModelUsage, ToolDefinition } from './types.js';
import { errorMessage } from '../util/error-message.js';

/**
 * The AI SDK's provider-level model (LanguageModelV3), which both providers implement. Its types
 * are taken from a provider rather than imported from @ai-sdk/provider, which is not a direct
 * dependency.
 */
export type LanguageModel = ReturnType<ReturnType<typeof createOllama>['chat']>;
export type CallOptions = Parameters<LanguageModel['doGenerate']>[0];
type SdkPrompt = CallOptions['prompt'];
type SdkTool = NonNullable<CallOptions['tools']>[number];
type GenerateResult = Awaited<ReturnType<LanguageModel['doGenerate']>>;
export type SdkContent = GenerateResult['content'][number];
export type SdkFinishReason = GenerateResult['finishReason'];
export type SdkUsage = GenerateResult['usage'];
export type SdkStreamPart = Awaited<ReturnType<LanguageModel['doStream']>>['stream'] extends ReadableStream<infer P> ? P : never;

const isPlainObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

function toSdkMessage(message: ChatMessage): SdkPrompt[number] {
  switch (message.role) {
    case 'system':
      return { role: 'system', content: message.content };
    case 'user':
      return { role: 'user', content: [{ type: 'text', text: message.content }] };
    case 'assistant':
      return {
        role: 'assistant',
        content: [
          ...(message.content === '' ? [] : [{ type: 'text' as const, text: message.content }]),
          ...(message.toolCalls ?? []).map((call) => ({
            type: 'tool-call' as const,
            toolCallId: call.id,
            toolName: call.name,
            input: isPlainObject(call.arguments) ? call.arguments : {},
          })),
        ],
      };
    case 'tool':
      return {
        role: 'tool',
        content: [{ type: 'tool-result', toolCallId: message.toolCallId, toolName: message.toolName, output: { type: 'text', value: message.content } }],
      };
  }
}

export const toSdkPrompt = (messages: readonly ChatMessage[]): SdkPrompt => messages.map(toSdkMessage);

export function toSdkTool(tool: ToolDefinition): SdkTool {
  // `$schema` tells a model nothing and costs context on every call.
  const { $schema: _ignored, ...schema } = tool.parameters;
  return { type: 'function', name: tool.name, description: tool.description, inputSchema: schema as JSONSchema7 };
}

/** Parses the arguments a model wrote; a failure is kept on the call for the engine to report back. */
export function parseToolArguments(raw: string): Pick<ModelToolCall, 'arguments' | 'argumentsError'> {
  if (raw.trim() === '') return { arguments: {} };
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch (error) {
    return { arguments: {}, argumentsError: `The arguments are not valid JSON (${errorMessage(error)}): ${echoed(raw)}` };
  }
  return isPlainObject(value) ? { arguments: value } : { arguments: {}, argumentsError: `The arguments must be a JSON object, got: ${echoed(raw)}` };
}

/** How much of refused arguments their error repeats: enough to see the fault, not a megabyte back into the context. */
const ECHOED_ARGUMENT_CHARS = 2000;

const echoed = (raw: string): string =>
  raw.length <= ECHOED_ARGUMENT_CHARS ? raw : `${raw.slice(0, ECHOED_ARGUMENT_CHARS)}... (${raw.length} characters in all)`;

export function toModelToolCall(call: { toolCallId: string; toolName: string; input: string }): ModelToolCall {
  return { id: call.toolCallId, name: call.toolName, rawArguments: call.input, ...parseToolArguments(call.input) };
}

export function toFinishReason(reason: SdkFinishReason): FinishReason {
  return reason.unified === 'error' ? 'other' : reason.unified;
}

export const toUsage = (usage: SdkUsage): ModelUsage => ({ input_tokens: usage.inputTokens.total, output_tokens: usage.outputTokens.total });

export function responseFromContent(content: readonly SdkContent[], finishReason: SdkFinishReason, usage: SdkUsage): ModelResponse {
  let text = '';
  const toolCalls: ModelToolCall[] = [];
  for (const part of content) {
    if (part.type === 'text') text += part.text;
    else if (part.type === 'tool-call') toolCalls.push(toModelToolCall(part));
  }
  return { text, toolCalls, finishReason: toFinishReason(finishReason), usage: toUsage(usage) };
}
