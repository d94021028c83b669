import { statSync } from 'node:fs';
import { isAbsolute } from 'node:path';
import type { PermissionMode, RunUsage } from '@mada/protocol';
import { BadRequestError, UnknownAgentError } from '../errors.js';
import { PathOutsideError, type PathSandbox } from '../tools/sandbox/paths.js';
import { ApprovalRuleSet, DEFAULT_APPROVAL_RULES } from '../tools/sandbox/command-policy/index.js';
import type { Tool, ToolSettings, ToolSource } from '../tools/tool.js';
import type { ToolHost } from '../tools/tool-host.js';
import { describeTool, type ModelCatalogue } from '../model/index.js';
import { findAgent, type AgentDefinition } from './definitions.js';
import { RunLoop, toolSet, withTools, type RunLimits, type ToolSet } from './run-loop.js';
import type { AgentTask, RunContext } from './run-context.js';
import { emptyUsage } from './run-usage.js';
import { thinking } from './events.js';
import { findRepositoryInstructions, type RepositoryInstructions } from './repository-instructions.js';
import { countTokens } from '../tokens/count.js';
import { ContextBudget } from './context-window.js';
import { TOOL_SEARCH } from './tool-search.js';
import type { AddressFilter } from '../util/address-hiding.js';

export class WorkingDirectoryError extends BadRequestError {
  constructor(dir: string) {
    super(`Working directory not allowed: ${dir}`);
  }
}

export interface EngineDeps {
  /** The configured models: each with its client, window and tool-call mode, as the runtime last reported them. */
  models: ModelCatalogue;
  /** Every tool the service has, by name; each agent gets its own subset. */
  tools: ReadonlyMap<string, Tool>;
  /** ALLOWED_PATHS: the workspace of runs that name none (benchmarks, tests calling run()). */
  sandbox: PathSandbox;
  toolSettings: ToolSettings;
  /** What the service found of this machine at start-up (tools/tool-host.ts). */
  toolHost: ToolHost;
  limits: RunLimits;
  /** Relative working directories (`.`) are taken from here: the service's start directory. */
  startDir: string;
  /** APPROVAL_RULES_FILE's rules; absent: the default rules. */
  approvalRules?: ApprovalRuleSet;
  /** Keyed mode: hides the runtime's and search engine's addresses in tool failures; absent: shown. */
  hideAddresses?: AddressFilter;
  /** Each run owner's further tools (MCP servers), asked at the start of every run; absent: none. */
  toolSource?: ToolSource;
  /** AGENTS_MD_MAX_BYTES: the largest AGENTS.md put in an agent's system prompt; absent: AGENTS_MD=false, none is. */
  instructionsMaxBytes?: number;
}

/**
 * A run outside RunService (benchmarks, tests): the task, and whatever of a context the caller
 * has; with no workspace, the run acts in ALLOWED_PATHS as local mode's user.
 */
export type RunOptions = AgentTask &
  Omit<RunContext, 'emit' | 'usage' | 'owner' | 'workspace'> &
  Partial<Pick<RunContext, 'emit' | 'usage' | 'owner' | 'workspace'>>;

export interface RunResult {
  text: string;
  usage: RunUsage;
}

const ignore = (): void => undefined;

/** What a run adds to its agent's own tools and prompt. */
interface LoopExtras {
  /** Offered one by one (the owner's MCP tools). */
  tools?: readonly Tool[];
  instructions?: RepositoryInstructions;
  /** Found and loaded through `mcp_tools` instead. */
  deferred?: { tools: readonly Tool[]; budgetTokens: number };
}

/** Whom a run outside RunService acts for: local mode's one user (users/user-directory.ts). */
const LOCAL_OWNER = 'local';

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

  /**
   * The real working directory, inside `workspace` and existing; otherwise WorkingDirectoryError.
   * A relative `dir` starts at `base`: the service's start directory for the HTTP routes (the
   * contract of `.`, DECISIONS.md), the workspace itself for the MCP tools (their description).
   */
  workingDirectory(dir: string, workspace: PathSandbox = this.deps.sandbox, base: string = this.deps.startDir): string {
    try {
      const real = workspace.resolve(dir, base);
      if (statSync(real).isDirectory()) return real;
    } catch (error) {
      if (!(error instanceof PathOutsideError) && (error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    }
    throw new WorkingDirectoryError(dir);
  }

  /** The configured name of the model asked for (absent: the default); UnknownModelError (400) otherwise. */
  model(name?: string | null): string {
    return this.deps.models.get(name).name;
  }

  /** The context window of `model` (the default when undefined) as its runtime reports it now. */
  contextWindow(model?: string): number {
    return this.deps.models.get(model).runtime.current().contextWindow;
  }

  /**
   * Tokens a prompt to `agentType` may have and still fit `model`'s window in the first request
   * of a run in `context` (used to cut summarization input into parts that fit): the definitions
   * of the MCP tools that run would be offered (or of `mcp_tools` instead) count, as in the run.
   */
  async promptRoom(agentType: string, mode: PermissionMode, workingDir: string, model?: string, context: RunContext = this.localContext()): Promise<number> {
    const task = { agentType, prompt: '', workingDir, mode, streaming: false, ...(model === undefined ? {} : { model }) };
    const mcp = this.offerOrDefer(await this.extraTools(this.agent(agentType), mode, context), model, context);
    return this.loop(task, context, workingDir, mcp).promptRoom();
  }

  /** A context for asking outside a run: local mode's user in ALLOWED_PATHS, told nothing. */
  private localContext(): RunContext {
    return { owner: LOCAL_OWNER, workspace: this.deps.sandbox, signal: new AbortController().signal, emit: ignore, usage: emptyUsage() };
  }

  /**
   * Runs `task` on behalf of the run whose context this is, to the agent's final answer. Refusals
   * (an unknown agent, a directory not allowed) are thrown before anything runs.
   */
  async execute(task: AgentTask, context: RunContext): Promise<string> {
    const workingDir = this.workingDirectory(task.workingDir, context.workspace);
    const agent = this.agent(task.agentType);
    const instructions = task.repositoryInstructions === false ? undefined : await this.repositoryInstructions(workingDir, task.model, context);
    const mcp = this.offerOrDefer(await this.extraTools(agent, task.mode, context), task.model, context);
    const loop = this.loop(task, context, workingDir, { ...mcp, ...(instructions ? { instructions } : {}) });
    context.signal.throwIfAborted();
    return loop.run();
  }

  /**
   * The AGENTS.md nearest the working directory, with a `thinking` event naming it, or saying why
   * it is left out. One that would take more than a quarter of the model's window is left out too:
   * it is sent with every request of the run, and would otherwise crowd out the code the agent reads.
   */
  private async repositoryInstructions(workingDir: string, model: string | undefined, context: RunContext): Promise<RepositoryInstructions | undefined> {
    const maxBytes = this.deps.instructionsMaxBytes;
    if (maxBytes === undefined) return undefined;
    const found = await findRepositoryInstructions(workingDir, context.workspace, maxBytes);
    if (found.kind === 'none') return undefined;
    const notUsed = (reason: string): undefined => {
      context.emit(thinking(`Repository instructions ${found.file} are not used: ${reason}.`));
      return undefined;
    };
    if (found.kind === 'skipped') return notUsed(found.reason);
    const window = this.deps.models.get(model).runtime.current().contextWindow;
    const tokens = countTokens(found.text);
    if (tokens > window / 4) return notUsed(`they take ${tokens} tokens, more than a quarter of the model's context window (${window} tokens)`);
    context.emit(thinking(`Following the repository instructions in ${found.file} (${tokens} tokens).`));
    return { file: found.file, text: found.text };
  }

  /**
   * The owner's MCP tools offered one by one, or, when their definitions would take more than a
   * quarter of the model's window (TEAMS.md section 12), none of them but `mcp_tools`, which finds
   * and loads them by what they do: a small local model's window is not spent on definitions of
   * tools the run never calls.
   */
  private offerOrDefer(tools: readonly Tool[], model: string | undefined, context: RunContext): LoopExtras {
    if (tools.length === 0) return {};
    const window = this.deps.models.get(model).runtime.current().contextWindow;
    const budgetTokens = Math.floor(window / 4);
    const tokens = new ContextBudget().toolTokens(tools.map(describeTool));
    if (tokens <= budgetTokens) return { tools };
    context.emit(
      thinking(
        `The definitions of ${tools.length} MCP tools would take ${tokens} tokens, more than a quarter of the model's context window (${window} tokens): ` +
          `the agent finds and loads the ones it needs with ${TOOL_SEARCH}.`,
      ),
    );
    return { deferred: { tools, budgetTokens } };
  }

  /**
   * The owner's tools from the tool source, those the agent may have in `mode`: an agent or mode
   * that cannot write gets only the tools marked read-only, from servers that see the workspace
   * read-only (a server's mark is its own word).
   */
  private async extraTools(agent: AgentDefinition, mode: PermissionMode, context: RunContext): Promise<readonly Tool[]> {
    const source = this.deps.toolSource;
    if (source === undefined) return [];
    const writes = agent.toolNames(mode).some((name) => this.deps.tools.get(name)?.modifiesFiles === true);
    const access = writes ? 'write' : 'read';
    const tools = await source.toolsFor({ owner: context.owner, workspace: context.workspace, access, notice: (text) => context.emit(thinking(text)) });
    return writes ? tools : tools.filter((tool) => tool.readOnly);
  }

  async run(options: RunOptions): Promise<string> {
    return (await this.runWithUsage(options)).text;
  }

  /** The final answer and what the run cost: model calls, tool calls and tokens, sub-agents included. */
  async runWithUsage(options: RunOptions): Promise<RunResult> {
    const { agentType, prompt, workingDir, mode, streaming, model, repositoryInstructions, emit = ignore, usage = emptyUsage(), owner = LOCAL_OWNER, workspace = this.deps.sandbox, ...context } = options;
    const task = { agentType, prompt, workingDir, mode, streaming, ...(model === undefined ? {} : { model }), ...(repositoryInstructions === undefined ? {} : { repositoryInstructions }) };
    return { text: await this.execute(task, { ...context, owner, workspace, emit, usage }), usage };
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

  private loop(task: AgentTask, context: RunContext, workingDir: string, extras: LoopExtras = {}): RunLoop {
    const agent = this.agent(task.agentType);
    const base = this.toolSetOf(agent, task.mode);
    const { tools: extra = [], instructions, deferred } = extras;
    const model = this.deps.models.get(task.model);
    return new RunLoop(model.client, model.runtime, this.deps.limits, {
      agent,
      prompt: task.prompt,
      mode: task.mode,
      streaming: task.streaming,
      toolSet: withTools(base, extra),
      emit: context.emit,
      usage: context.usage,
      ...(instructions ? { instructions } : {}),
      ...(deferred ? { deferredTools: deferred } : {}),
      ...(context.afterModelCall ? { afterModelCall: context.afterModelCall } : {}),
      toolContext: {
        workingDir,
        sandbox: context.workspace,
        settings: this.deps.toolSettings,
        host: this.deps.toolHost,
        signal: context.signal,
        approval: { rules: this.rules, ...(context.approvalGate ? { gate: context.approvalGate } : {}) },
        ...(context.beforeModify ? { beforeModify: context.beforeModify } : {}),
        ...(context.log ? { log: context.log } : {}),
        ...(this.deps.hideAddresses ? { hideAddresses: this.deps.hideAddresses } : {}),
        // A sub-agent is part of its run: the same context (owner and workspace too), its own
        // signal, and no events of its own.
        spawnAgent: (agentType, prompt, dir, signal) =>
          this.execute(
            // The model names it from the directory it works in, not the service's start directory.
            // The parent's model too: a run is sent to the model it asked for, sub-agents included.
            { agentType, prompt, workingDir: isAbsolute(dir) ? dir : `${workingDir}/${dir}`, mode: task.mode, streaming: false, model: model.name },
            { ...context, signal, emit: ignore },
          ),
      },
    });
  }
}
