export { createModelClient, type ModelClientOptions, type ModelSettings } from './create-model-client.js';
export { describeTool } from './describe-tool.js';
export { ModelError, type ModelErrorKind } from './errors.js';
export { extractTextToolCalls, type ExtractOptions, type TextToolCall, type TextToolCallExtraction } from './text-tool-calls.js';
export type {
  AssistantToolCall,
  ChatMessage,
  FinishReason,
  JsonSchema,
  ModelClient,
  ModelRequest,
  ModelResponse,
  ModelStreamPart,
  ModelToolCall,
  ModelUsage,
  ToolDefinition,
} from './types.js';
