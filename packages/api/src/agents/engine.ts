import { statSync } from 'node:fs';
import { isAbsolute } from 'node:path';
import type { AgentEvent, PermissionMode } from '@mada/protocol';
import { BadRequestError, UnknownAgentError } from '../errors.js';
import { PathOutsideError, type PathSandbox } from '../tools/sandbox/paths.js';
import { ApprovalRuleSet, DEFAULT_APPROVAL_RULES } from '../tools/sandbox/command-policy/index.js';
import type { ApprovalGate, Tool, ToolSettings } from '../tools/tool.js';
import type { ModelClient, RuntimeInfoSource } from '../model/index.js';
import type { Log } from '../util/log.js';
import { findAgent, type AgentDefinition } from './definitions.js';
import { RunLoop, toolSet, type RunLimits, type ToolSet } from './run-loop.js';
import { emptyUsage, type RunUsage } from './run-usage.js';
import type { AddressFilter } from '../util/address-hiding.js';

export class WorkingDirectoryError extends BadRequestError {
  constructor(dir: string) {
    super(`Working directory not allowed: ${dir}`);
  }
}

export interface EngineDeps {
  model: ModelClient;
  /** The model's window and tool-call mode, as the runtime last reported them. */
  runtime: RuntimeInfoSource;
  /** Every tool the service has, by name; each agent gets its own subset. */
  tools: ReadonlyMap<string, Tool>;
  sandbox: PathSandbox;
  toolSettings: ToolSettings;
  limits: RunLimits;
  /** Relative working directories (`.`) are taken from here: the service's start directory. */
  startDir: string;
  /** APPROVAL_RULES_FILE's rules; absent: the default rules. */
  approvalRules?: ApprovalRuleSet;
  /** Keyed mode: hides the runtime's and search engine's addresses in tool failures; absent: shown. */
  hideAddresses?: AddressFilter;
}

export interface RunOptions {
  agentType: string;
  prompt: string;
  workingDir: string;
  mode: PermissionMode;
  signal: AbortSignal;
  streaming: boolean;
  emit?: (frame: AgentEvent) => void;
  /** Totals to add this run's cost to (sub-agents share their parent's); readable even when the run fails. */
  usage?: RunUsage;
  /** Who answers an approval rule's `ask` in mode `default`; absent: nobody, and the call is refused. */
  approvalGate?: ApprovalGate;
  /** The run's checkpoint hook, awaited before the first (and each) modifying tool call, sub-agents' included. */
  beforeModify?: () => Promise<void>;
  /** The run's logger (with its run_id), for the tools and whatever else logs on the run's behalf. */
  log?: Log;
}

export interface RunResult {
  text: string;
  usage: RunUsage;
}

const ignore = (): void => undefined;

/** Finds the agent, confines it to its working directory and tool set, and runs its loop. */
export class AgentEngine {
  private readonly rules: ApprovalRuleSet;
  private readonly toolSets = new Map<string, ToolSet>();

  constructor(private readonly deps: EngineDeps) {
    this.rules = deps.approvalRules ?? new ApprovalRuleSet(DEFAULT_APPROVAL_RULES);
  }

  /** Throws UnknownAgentError (400) before anything starts. */
  agent(name: string): AgentDefinition {
    const agent = findAgent(name);
    if (!agent) throw new UnknownAgentError(name);
    return agent;
  }

  /** The real working directory, inside the sandbox and existing; otherwise WorkingDirectoryError. */
  workingDirectory(dir: string): string {
    try {
      const real = this.deps.sandbox.resolve(dir, this.deps.startDir);
      if (statSync(real).isDirectory()) return real;
    } catch (error) {
      if (!(error instanceof PathOutsideError) && (error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    }
    throw new WorkingDirectoryError(dir);
  }

  /**
   * Tokens a prompt to `agentType` may have and still fit the model's window in the first
   * request (used to cut summarization input into parts that fit).
   */
  promptRoom(agentType: string, mode: PermissionMode, workingDir: string): number {
    const options = { agentType, prompt: '', workingDir, mode, signal: new AbortController().signal, streaming: false };
    return this.loop(options, emptyUsage(), workingDir).promptRoom();
  }

  async run(options: RunOptions): Promise<string> {
    return (await this.runWithUsage(options)).text;
  }

  /**
   * The final answer and what the run cost: model calls, tool calls and tokens, sub-agents
   * included. Refusals (an unknown agent, a directory not allowed) are thrown before anything runs.
   */
  async runWithUsage(options: RunOptions): Promise<RunResult> {
    const usage = options.usage ?? emptyUsage();
    const loop = this.loop(options, usage, this.workingDirectory(options.workingDir));
    options.signal.throwIfAborted();
    return { text: await loop.run(), usage };
  }

  /**
   * The agent's tools in `mode`, built on the first run that needs them: describing them and
   * counting their tokens cost every run's start tens of microseconds.
   */
  private toolSetOf(agent: AgentDefinition, mode: PermissionMode): ToolSet {
    const key = `${agent.name} ${mode}`;
    let set = this.toolSets.get(key);
    if (set === undefined) {
      const names = agent.toolNames(mode).filter((name) => this.deps.tools.has(name));
      set = toolSet(new Map(names.map((name) => [name, this.deps.tools.get(name)!] as const)));
      this.toolSets.set(key, set);
    }
    return set;
  }

  private loop(options: RunOptions, usage: RunUsage, workingDir: string): RunLoop {
    const agent = this.agent(options.agentType);
    return new RunLoop(this.deps.model, this.deps.runtime, this.deps.limits, {
      agent,
      prompt: options.prompt,
      mode: options.mode,
      streaming: options.streaming,
      toolSet: this.toolSetOf(agent, options.mode),
      emit: options.emit ?? ignore,
      usage,
      toolContext: {
        workingDir,
        sandbox: this.deps.sandbox,
        settings: this.deps.toolSettings,
        signal: options.signal,
        approval: { rules: this.rules, ...(options.approvalGate ? { gate: options.approvalGate } : {}) },
        ...(options.beforeModify ? { beforeModify: options.beforeModify } : {}),
        ...(options.log ? { log: options.log } : {}),
        ...(this.deps.hideAddresses ? { hideAddresses: this.deps.hideAddresses } : {}),
        spawnAgent: (agentType, prompt, dir, signal) =>
          this.run({
            agentType,
            prompt,
            // The model names it from the directory it works in, not the service's start directory.
            workingDir: isAbsolute(dir) ? dir : `${workingDir}/${dir}`,
            mode: options.mode,
            signal,
            streaming: false,
            usage,
            ...(options.approvalGate ? { approvalGate: options.approvalGate } : {}),
            ...(options.beforeModify ? { beforeModify: options.beforeModify } : {}),
            ...(options.log ? { log: options.log } : {}),
          }),
      },
    });
  }
}
