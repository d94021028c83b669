export { MAX_ARGUMENT_DEPTH, withBoundedArguments } from './argument-depth.js';
export { createModelClient, type ModelClientOptions, type ModelSettings } from './create-model-client.js';
export { describeTool } from './describe-tool.js';
export { ModelError, refusesTools, streamWithoutFinish, type ModelErrorKind } from './errors.js';
export { runtimeUnreachable } from './runtime-unreachable.js';
export { RuntimeIntrospector, REFRESH_INTERVAL_MS, type IntrospectorOptions } from './runtime-introspector.js';
export { ModelCatalogue, openModelCatalogue, UnknownModelError, type CatalogueOptions, type ServedModel } from './models.js';
export { fixedRuntimeInfo, type RuntimeInfo, type RuntimeInfoSource, type ToolCallMode } from './runtime-info.js';
export { StreamGate } from './text-calls/stream-gate.js';
export { stripThinking } from './text-calls/thinking.js';
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
export { describeToolsAsText, toTextToolHistory } from './text-calls/history.js';
