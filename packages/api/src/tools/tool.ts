import type { ApprovalRuleSet } from './sandbox/command-policy/index.js';
import type { z } from 'zod';
import type { Settings } from '../settings.js';
import type { AddressFilter } from '../util/address-hiding.js';
import type { Log } from '../util/log.js';
import type { PathSandbox } from './sandbox/paths.js';
import type { ToolHost } from './tool-host.js';

/** What every tool returns (the agent reads its text rendering; docs/api.md, "Agents and tools"). */
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
  | 'sandboxMemoryMb'
  | 'sandboxMaxProcesses'
  | 'sandboxMaxFileMb'
  | 'sandboxMinFreeMb'
  | 'sandboxMinFreePercent'
  | 'sandboxMinFreeInodes'
  | 'dataDir'
  | 'sandboxReadPaths'
  | 'allowedPaths'
  | 'workspacesDir'
  | 'maxWriteBytes'
  | 'searchEngineUrl'
  | 'searchEngineTimeout'
  | 'retryMaxAttempts'
  | 'retryBaseDelay'
  | 'retryMaxDelay'
> &
  // The SQLite database may lie outside DATA_DIR: its file system is watched too (disk-floor.ts).
  Partial<Pick<Settings, 'database'>>;

/** Runs a sub-agent for spawn_agent; provided by the agent engine. */
export type SubAgentRunner = (agentType: string, prompt: string, workingDir: string, signal: AbortSignal) => Promise<string>;

export interface ToolContext {
  /** Absolute, symlink-free working directory of the run; inside the sandbox. */
  workingDir: string;
  sandbox: PathSandbox;
  settings: ToolSettings;
  /** What the service found of this machine at start-up: the sandbox, the toolchains, the search backend, the gitlink guard. */
  host: ToolHost;
  /** Aborted when the run is cancelled (client gone, timeout): tools stop and kill their children. */
  signal: AbortSignal;
  spawnAgent?: SubAgentRunner;
  /** The approval rules, and in mode `default` who answers an `ask`; absent: the default rules, nobody. */
  approval?: ApprovalContext;
  /**
   * Set when an approve_always grant for this directory let the call run: a shell command checked
   * again just before it starts must still act inside it (an earlier command may have moved a link).
   */
  grantScope?: string;
  /**
   * Set when a call ran without asking because it changed files inside this directory only (the
   * run's working directory): a shell command checked again just before it starts must still do so.
   */
  changeScope?: string;
  /** Awaited before a tool that changes files runs: the run's checkpoint takes its first snapshot. */
  beforeModify?: () => Promise<void>;
  /** The run's logger: every line carries its run_id. */
  log?: Log;
  /**
   * For texts about the service's own infrastructure (the search engine, the model runtime behind a
   * sub-agent): hides their addresses from keyed users. Absent: shown (local mode).
   */
  hideAddresses?: AddressFilter;
}

/** One `ask` put to the user. `matches` are the deciding rules' matches an approve_always grant covers. */
export interface ApprovalAsk {
  tool: string;
  args: Record<string, unknown>;
  reason: string;
  matches: string[];
  /** Every real path the call acts on; absent when that is not known, and then no grant covers it. */
  reach?: string[];
  /**
   * A grant covers the tool by its name and `matches`, wherever it acts (an MCP tool, whose
   * arguments and reach are its server's to say): `reach` is not asked for.
   */
  byName?: boolean;
}

/** Approved, or refused with the text the model reads instead of the tool's result. */
export type ApprovalAnswer =
  /** `scope`: a standing approve_always grant answered, not the user; the call must keep inside this directory. */
  | { approved: true; scope?: string }
  | { approved: false; text: string };

/** Puts an `ask` to the run's user and waits for the answer (or answers at once, on_ask=deny). */
export interface ApprovalGate {
  ask(request: ApprovalAsk, signal: AbortSignal): Promise<ApprovalAnswer>;
}

export interface ApprovalContext {
  rules: ApprovalRuleSet;
  gate?: ApprovalGate;
}

export interface Tool<P extends z.ZodType = z.ZodType> {
  name: string;
  /** What the model reads to decide when to call the tool. */
  description: string;
  /** Drives validation of the model's arguments and the JSON Schema the model sees. */
  parameters: P;
  /** The JSON Schema the model sees instead of `parameters`' (an MCP server's, which the server validates itself). */
  inputSchema?: Record<string, unknown>;
  /** Read-only tools are the only ones offered in plan mode and to explore/plan. */
  readOnly: boolean;
  /** Changes files in the working directory (write_file, edit_file, bash): a checkpoint is taken first. */
  modifiesFiles?: boolean;
  /**
   * Why a call asks in modes that ask unless an approval rule allows it by name (an MCP tool its
   * server does not mark read-only); absent: the rules and the call's scope decide.
   */
  asksUnlessAllowed?: string;
  /** The `args` object of the `tool_start` stream event (docs/api.md, "Stream events"). */
  startArgs(params: z.output<P>): Record<string, unknown>;
  execute(params: z.output<P>, context: ToolContext): Promise<ToolResult>;
}

/** Whose tools a run asks a ToolSource for, and where it says what it left out. */
export interface ToolSourceRequest {
  owner: string;
  workspace: PathSandbox;
  /**
   * `read` for a run that may not change files (explore, plan, mode plan): its tools' processes see
   * the workspace read-only, whatever a tool claims of itself. `write` for a run that may.
   */
  access: 'read' | 'write';
  /** Said to the run as a `thinking` event: a server that is down, a tool left out. */
  notice(text: string): void;
}

/** Tools beyond the built-in ones, per user (MCP servers): asked at the start of each run. */
export interface ToolSource {
  toolsFor(request: ToolSourceRequest): Promise<readonly Tool[]>;
}
