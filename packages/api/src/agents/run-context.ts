import type { AgentEvent, PermissionMode, RunUsage } from '@mada/protocol';
import type { PathSandbox } from '../tools/sandbox/paths.js';
import type { ApprovalGate } from '../tools/tool.js';
import type { Log } from '../util/log.js';

/**
 * Everything a stored run lends whatever works on its behalf (its agent, a sub-agent, a turn's
 * summarization): made once by RunService and passed whole, never taken apart into options.
 */
export interface RunContext {
  /** The user whose run it is. */
  owner: string;
  /**
   * Where the run may act: the owner's workspace paths as a sandbox, resolved when the run was
   * created. Its tools, its shell's mounts, its searches and its sub-agents see nothing else.
   */
  workspace: PathSandbox;
  /** Aborted when the run is cancelled (from any request or replica) or interrupted by shutdown. */
  signal: AbortSignal;
  /** The run's progress: stored as its events, in order, and told to its followers. */
  emit(frame: AgentEvent): void;
  /** Totals every model and tool call of the run adds to; read at its end however it ended. */
  usage: RunUsage;
  /** Writes `run_id` on every line. */
  log?: Log;
  /** Who answers an approval rule's `ask` in mode `default`; absent: nobody, and the call is refused. */
  approvalGate?: ApprovalGate;
  /** The run's checkpoint: awaited before a tool changes files (absent when checkpoints are off). */
  beforeModify?: () => Promise<void>;
  /**
   * Awaited after each model call (the run's, a sub-agent's, a summary's), once its usage is
   * counted: throws to end the run there (its user's daily token quota reached). Absent: no check.
   */
  afterModelCall?: () => Promise<void>;
}

/** What an agent is asked to do: the part of a run that is not its context. */
export interface AgentTask {
  agentType: string;
  prompt: string;
  workingDir: string;
  mode: PermissionMode;
  /** Streamed model calls; the legacy blocking routes make non-streaming ones. */
  streaming: boolean;
  /** A configured model (LLM_MODELS); absent: LLM_MODEL. Its sub-agents use the same. */
  model?: string;
  /**
   * false: no AGENTS.md in the system prompt (a conversation's summary, which reads no code and
   * whose prompt room is counted without it). Absent: the one nearest the working directory.
   */
  repositoryInstructions?: boolean;
}

/** Turns a user into the workspace their runs act in (workspaces.ts, over the user directory). */
export interface WorkspaceSource {
  of(userId: string): Promise<PathSandbox>;
}
