import type { AgentEvent, PermissionMode, RunUsage } from '@mada/protocol';
import { countTokens } from '../tokens/count.js';
import {
  describeTool,
  describeToolsAsText,
  extractTextToolCalls,
  refusesTools,
  StreamGate,
  streamWithoutFinish,
  stripThinking,
  toTextToolHistory,
  type ChatMessage,
  type ModelClient,
  type ModelRequest,
  type ModelResponse,
  type ModelToolCall,
  type ModelUsage,
  type RuntimeInfoSource,
  type ToolCallMode,
  type ToolDefinition,
  withBoundedArguments,
} from '../model/index.js';
import type { Tool, ToolContext } from '../tools/tool.js';
import { ContextBudget, promptRoom } from './context-window.js';
import type { AgentDefinition } from './definitions.js';
import { thinking } from './events.js';
import { rePrompt, systemPrompt } from './prompts.js';
import { executeToolCall } from './tool-executor.js';
import type { RepositoryInstructions } from './repository-instructions.js';
import { toolSearch } from './tool-search.js';

export const MAX_RE_PROMPTS = 2;

/**
 * Calls run from one answer; any beyond get an error result instead. One answer (which a hostile
 * repository can steer) may hold thousands of calls, and every result stays in the run's memory.
 */
export const MAX_CALLS_PER_ANSWER = 32;

const notRun = (count: number): string =>
  `Error: Not run: ${count} tool calls in one answer, and at most ${MAX_CALLS_PER_ANSWER} are run. Ask for the rest in your next answer.`;

export interface RunLimits {
  maxSteps: number;
  toolTimeoutSeconds: number;
}

/** An agent's tools in one mode and what the model is told of them: built once per agent and mode. */
export interface ToolSet {
  tools: ReadonlyMap<string, Tool>;
  /** The definitions offered to a model with native tool calls. */
  specs: readonly ToolDefinition[];
  /** The same, written for the system prompt of a model that writes its calls as text. */
  asText: string;
}

export function toolSet(tools: ReadonlyMap<string, Tool>): ToolSet {
  const specs = [...tools.values()].map(describeTool);
  return { tools, specs, asText: describeToolsAsText(specs) };
}

/** `set` with `more` added (a tool of a name already there replaces it). */
export const withTools = (set: ToolSet, more: readonly Tool[]): ToolSet =>
  more.length === 0 ? set : toolSet(new Map([...set.tools, ...more.map((tool) => [tool.name, tool] as const)]));

export interface LoopInput {
  agent: AgentDefinition;
  prompt: string;
  mode: PermissionMode;
  /** Streamed runs send text as it arrives; blocking runs make non-streaming model calls. */
  streaming: boolean;
  /** The same object for every run of an agent and mode, so what is counted of it is counted once. */
  toolSet: ToolSet;
  toolContext: ToolContext;
  emit: (frame: AgentEvent) => void;
  /** Added to as the run goes, so a failed run still tells what it cost. */
  usage: RunUsage;
  /** RunContext's: awaited after each model call. */
  afterModelCall?: () => Promise<void>;
  /** The repository's AGENTS.md, put in the system prompt (and so counted in every request). */
  instructions?: RepositoryInstructions;
  /**
   * MCP tools not offered one by one (their definitions would take too much of the window): the
   * run gets `mcp_tools` to find them, and those it finds join its tools for the rest of the run,
   * within `budgetTokens` of definitions.
   */
  deferredTools?: { tools: readonly Tool[]; budgetTokens: number };
}

export class StepLimitError extends Error {
  constructor(steps: number) {
    super(`Stopped after ${steps} model calls without a final answer (AGENT_MAX_STEPS=${steps})`);
    this.name = 'StepLimitError';
  }
}

/** One model answer: text and the tool calls to run (structured, or recognised in the text). */
interface Turn {
  text: string;
  toolCalls: ModelToolCall[];
}

/** A request ready to send, with what the tokenizer says it costs. */
interface Prepared {
  request: ModelRequest;
  tokens: number;
}

/** The agent loop, shared by every agent: model call, tool calls, results back, repeat. */
export class RunLoop {
  private readonly messages: ChatMessage[];
  /** The run's tools: the agent's, and any `mcp_tools` loads as the run goes. */
  private tools: ToolSet;
  private systems: Record<ToolCallMode, ChatMessage>;
  private readonly budget = new ContextBudget();
  private toolsUsed = 0;
  private rePrompts = 0;

  constructor(
    private readonly model: ModelClient,
    private readonly runtime: RuntimeInfoSource,
    private readonly limits: RunLimits,
    private readonly input: LoopInput,
  ) {
    const deferred = input.deferredTools;
    this.tools =
      deferred === undefined || deferred.tools.length === 0
        ? input.toolSet
        : withTools(input.toolSet, [toolSearch(deferred.tools, deferred.budgetTokens, (found) => this.load(found))]);
    this.systems = this.systemsFor(this.tools);
    this.messages = [this.systems.native, { role: 'user', content: input.prompt }];
  }

  private systemsFor(tools: ToolSet): Record<ToolCallMode, ChatMessage> {
    const system = (toolsAsText?: string): ChatMessage => ({
      role: 'system',
      content: systemPrompt(this.input.agent.name, this.input.toolContext.workingDir, this.input.mode, {
        ...(toolsAsText === undefined ? {} : { toolsAsText }),
        ...(this.input.instructions === undefined ? {} : { instructions: this.input.instructions }),
      }),
    });
    return { native: system(), text: system(tools.asText) };
  }

  /** Tools `mcp_tools` found: offered from the next request on, natively or in the system prompt. */
  private load(found: readonly Tool[]): void {
    this.tools = withTools(this.tools, found);
    this.systems = this.systemsFor(this.tools);
  }

  get toolCallCount(): number {
    return this.toolsUsed;
  }

  /** Tokens the first prompt may have for the first request to fit the window. */
  promptRoom(): number {
    const { contextWindow, toolCalls } = this.runtime.current();
    return promptRoom(contextWindow, this.systems[toolCalls], toolCalls === 'native' ? this.tools.specs : []);
  }

  async run(): Promise<string> {
    for (let step = 0; step < this.limits.maxSteps && !this.budgetSpent(); step++) {
      const turn = await this.callModel();
      await this.input.afterModelCall?.();
      if (turn.toolCalls.length === 0) {
        if (this.mustRePrompt(turn.text)) continue;
        return turn.text;
      }
      this.messages.push({ role: 'assistant', content: turn.text, toolCalls: turn.toolCalls });
      const count = turn.toolCalls.length;
      if (count > MAX_CALLS_PER_ANSWER) {
        this.input.emit(thinking(`The answer holds ${count} tool calls: the first ${MAX_CALLS_PER_ANSWER} run, the rest are refused.`));
      }
      for (const [index, call] of turn.toolCalls.entries()) {
        if (index >= MAX_CALLS_PER_ANSWER) {
          this.messages.push({ role: 'tool', toolCallId: call.id, toolName: call.name, content: notRun(count) });
          continue;
        }
        const content = await executeToolCall(call, {
          tools: this.tools.tools,
          mode: this.input.mode,
          toolContext: this.input.toolContext,
          timeoutSeconds: this.limits.toolTimeoutSeconds,
          emit: this.input.emit,
        });
        this.toolsUsed++;
        this.input.usage.tool_calls++;
        this.messages.push({ role: 'tool', toolCallId: call.id, toolName: call.name, content });
      }
    }
    throw new StepLimitError(this.limits.maxSteps);
  }

  /**
   * AGENT_MAX_STEPS bounds the run, not each loop: sub-agents count their model calls in the
   * run's usage, so a parent spawning 32 of them per answer cannot multiply the run's cost.
   */
  private budgetSpent(): boolean {
    return this.input.usage.model_calls >= this.limits.maxSteps;
  }

  /** `task` answering without any tool call is sent back, at most twice (docs/api.md, "Agents and tools"). */
  private mustRePrompt(answer: string): boolean {
    if (!this.holdsBack()) return false;
    this.rePrompts++;
    this.messages.push({ role: 'assistant', content: answer }, { role: 'user', content: rePrompt(this.rePrompts) });
    this.input.emit(thinking('No tool was used yet: asking the agent to inspect the code with its tools.'));
    return true;
  }

  /**
   * The next request in the runtime's current tool mode, within its window: older tool results
   * are masked first; one that cannot fit even then fails the run (ContextOverflowError).
   */
  private prepare(): Prepared {
    const { contextWindow, toolCalls } = this.runtime.current();
    this.messages[0] = this.systems[toolCalls];
    const tools = toolCalls === 'native' ? this.tools.specs : [];
    const masked = this.budget.fit(this.messages, tools, contextWindow);
    if (masked > 0) this.input.emit(thinking(`Context window nearly full: ${masked} older tool result(s) replaced with placeholders.`));
    const messages = toolCalls === 'native' ? this.messages : toTextToolHistory(this.messages);
    return { request: { messages, ...(tools.length > 0 ? { tools } : {}) }, tokens: this.budget.requestTokens(this.messages, tools) };
  }

  private async callModel(): Promise<Turn> {
    const prepared = this.prepare();
    try {
      return await this.callOnce(prepared);
    } catch (error) {
      if (prepared.request.tools === undefined || !refusesTools(error)) throw error;
      this.runtime.useTextToolCalls();
      this.input.emit(thinking('The model does not take native tool calls: its tools are described in its prompt instead.'));
      return this.callOnce(this.prepare());
    }
  }

  private async callOnce(prepared: Prepared): Promise<Turn> {
    const signal = this.input.toolContext.signal;
    this.input.usage.model_calls++;
    if (this.input.streaming) return this.streamTurn(prepared, signal);
    const answer = await this.model.complete(prepared.request, signal, this.input.toolContext.log);
    const response = { ...answer, toolCalls: answer.toolCalls.map(withBoundedArguments) };
    this.countUsage(prepared, response);
    return this.recognise(response);
  }

  /**
   * The runtime's own counts; the tokenizer's where it gave none. Zero counts as none: a request
   * is never empty, and the Ollama provider reports missing counts as 0.
   */
  private countUsage(prepared: Prepared, response: { text: string; toolCalls: readonly ModelToolCall[]; usage: ModelUsage }): void {
    const usage = this.input.usage;
    usage.input_tokens += response.usage.input_tokens || prepared.tokens;
    usage.output_tokens +=
      response.usage.output_tokens || countTokens(response.text) + (response.toolCalls.length > 0 ? countTokens(JSON.stringify(response.toolCalls)) : 0);
  }

  /** Calls written as text count when the model sent no structured ones; reasoning is never the answer. */
  private recognise(turn: Turn): Turn {
    if (turn.toolCalls.length > 0) return { text: stripThinking(turn.text), toolCalls: turn.toolCalls };
    const found = extractTextToolCalls(turn.text, this.tools.tools.keys());
    return { text: found.text, toolCalls: found.calls.map(withBoundedArguments) };
  }

  /**
   * Text goes out as it arrives, except (a) from a `task` that has not used a tool yet, since it
   * may be re-prompted, (b) reasoning, and (c) from where a tool call written as text may begin.
   */
  private async streamTurn(prepared: Prepared, signal: AbortSignal): Promise<Turn> {
    const gate = new StreamGate();
    const holding = this.holdsBack();
    let response: ModelResponse | undefined;
    const toolCalls: ModelToolCall[] = [];
    for await (const part of this.model.stream(prepared.request, signal, this.input.toolContext.log)) {
      if (part.type === 'tool-call') toolCalls.push(withBoundedArguments(part.call));
      else if (part.type === 'finish') response = part.response;
      else if (!holding) this.sendText(gate.push(part.text));
    }
    // The client keeps the whole text for the finish part: keeping a second copy here would
    // double the per-token work of a long answer.
    if (response === undefined) throw streamWithoutFinish();
    this.countUsage(prepared, { ...response, toolCalls });
    const turn = this.recognise({ text: response.text, toolCalls });
    if (turn.toolCalls.length === 0 && !this.holdsBack()) this.sendText(gate.finish());
    return turn;
  }

  /** True while a `task` without any tool call yet may still be re-prompted. */
  private holdsBack(): boolean {
    return this.input.agent.requiresToolUse && this.toolsUsed === 0 && this.rePrompts < MAX_RE_PROMPTS;
  }

  private sendText(text: string): void {
    if (text === '') return;
    this.input.emit(this.input.agent.textEvent === 'chunk' ? { event: 'chunk', data: text } : { event: 'response', text });
  }
}
