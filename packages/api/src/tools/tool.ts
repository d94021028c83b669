import type { z } from 'zod';
import type { Settings } from '../settings.js';
import type { PathSandbox } from './sandbox/paths.js';

/** What every tool returns (SPEC.md section 2, "Tool result"). */
export interface ToolResult {
  success: boolean;
  data: string;
  error: string;
  metadata: Record<string, unknown>;
}

export const succeed = (data: string, metadata: Record<string, unknown> = {}): ToolResult => ({
  success: true,
  data,
  error: '',
  metadata,
});

export const fail = (error: string, metadata: Record<string, unknown> = {}): ToolResult => ({
  success: false,
  data: '',
  error,
  metadata,
});

/** The text the agent sees: the data on success, the error message otherwise. */
export const renderForAgent = (result: ToolResult): string => (result.success ? result.data : result.error);

export type ToolSettings = Pick<
  Settings,
  | 'toolTimeoutSeconds'
  | 'sandboxEnabled'
  | 'sandboxNetwork'
  | 'maxWriteBytes'
  | 'searchEngineUrl'
  | 'searchEngineTimeout'
  | 'retryMaxAttempts'
  | 'retryBaseDelay'
  | 'retryMaxDelay'
>;

/** Runs a sub-agent for spawn_agent; provided by the agent engine. */
export type SubAgentRunner = (agentType: string, prompt: string, workingDir: string, signal: AbortSignal) => Promise<string>;

export interface ToolContext {
  /** Absolute, symlink-free working directory of the run; inside the sandbox. */
  workingDir: string;
  sandbox: PathSandbox;
  settings: ToolSettings;
  /** Aborted when the run is cancelled (client gone, timeout): tools stop and kill their children. */
  signal: AbortSignal;
  spawnAgent?: SubAgentRunner;
}

export interface Tool<P extends z.ZodType = z.ZodType> {
  name: string;
  /** What the model reads to decide when to call the tool. */
  description: string;
  /** Drives validation of the model's arguments and the JSON Schema the model sees. */
  parameters: P;
  /** Read-only tools are the only ones offered in plan mode and to explore/plan. */
  readOnly: boolean;
  /** The `args` object of the `tool_start` stream event (SPEC.md section 4 table). */
  startArgs(params: z.output<P>): Record<string, unknown>;
  execute(params: z.output<P>, context: ToolContext): Promise<ToolResult>;
}
