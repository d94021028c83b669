export { startScriptedModel, type ScriptedModel, type ScriptedModelOptions, type ScriptedRuntime } from './server.js';
export { scripted, type Chunk, type Hold, type Pause, type ScriptStep, type ScriptedToolCall, type ScriptedTurn, type TextToolCallForm } from './turns.js';
export type { ExchangeOutcome, Protocol, RecordedMessage, RecordedRequest, RecordedTool, RecordedToolCall } from './recording.js';
