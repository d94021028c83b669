import type { PermissionMode, StreamFrame } from '@mada/protocol';
import {
  describeTool,
  extractTextToolCalls,
  type ChatMessage,
  type ModelClient,
  type ModelRequest,
  type ModelToolCall,
  type ToolDefinition,
} from '../model/index.js';
import type { Tool, ToolContext } from '../tools/tool.js';
import { maskOldToolResults } from './context-window.js';
import type { AgentDefinition } from './definitions.js';
import { thinking } from './events.js';
import { rePrompt, systemPrompt } from './prompts.js';
import { executeToolCall } from './tool-executor.js';

export const MAX_RE_PROMPTS = 2;

export interface RunLimits {
  maxSteps: number;
  contextTokens: number;
  toolTimeoutSeconds: number;
}

export interface LoopInput {
  agent: AgentDefinition;
  prompt: string;
  mode: PermissionMode;
  /** Streamed runs send text as it arrives; blocking runs make non-streaming model calls. */
  streaming: boolean;
  tools: ReadonlyMap<string, Tool>;
  toolContext: ToolContext;
  emit: (frame: StreamFrame) => void;
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

/** The agent loop, shared by every agent: model call, tool calls, results back, repeat. */
export class RunLoop {
  private readonly messages: ChatMessage[];
  private readonly specs: ToolDefinition[];
  private toolsUsed = 0;
  private rePrompts = 0;

  constructor(
    private readonly model: ModelClient,
    private readonly limits: RunLimits,
    private readonly input: LoopInput,
  ) {
    this.messages = [
      { role: 'system', content: systemPrompt(input.agent.name, input.toolContext.workingDir, input.mode) },
      { role: 'user', content: input.prompt },
    ];
    this.specs = [...input.tools.values()].map(describeTool);
  }

  get toolCallCount(): number {
    return this.toolsUsed;
  }

  async run(): Promise<string> {
    for (let step = 0; step < this.limits.maxSteps; step++) {
      const masked = maskOldToolResults(this.messages, this.limits.contextTokens);
      if (masked > 0) this.input.emit(thinking(`Context window nearly full: ${masked} older tool result(s) replaced with placeholders.`));
      const turn = await this.callModel();
      if (turn.toolCalls.length === 0) {
        if (this.mustRePrompt(turn.text)) continue;
        return turn.text;
      }
      this.messages.push({ role: 'assistant', content: turn.text, toolCalls: turn.toolCalls });
      for (const call of turn.toolCalls) {
        const content = await executeToolCall(call, {
          tools: this.input.tools,
          mode: this.input.mode,
          toolContext: this.input.toolContext,
          timeoutSeconds: this.limits.toolTimeoutSeconds,
          emit: this.input.emit,
        });
        this.toolsUsed++;
        this.messages.push({ role: 'tool', toolCallId: call.id, toolName: call.name, content });
      }
    }
    throw new StepLimitError(this.limits.maxSteps);
  }

  /** `task` answering without any tool call is sent back, at most twice (SPEC.md section 1). */
  private mustRePrompt(answer: string): boolean {
    if (!this.holdsBack()) return false;
    this.rePrompts++;
    this.messages.push({ role: 'assistant', content: answer }, { role: 'user', content: rePrompt(this.rePrompts) });
    this.input.emit(thinking('No tool was used yet: asking the agent to inspect the code with its tools.'));
    return true;
  }

  private recogniseTextCalls(turn: Turn): Turn {
    if (turn.toolCalls.length > 0) return turn;
    const found = extractTextToolCalls(turn.text, this.input.tools.keys());
    return found.calls.length > 0 ? { text: found.text, toolCalls: found.calls } : turn;
  }

  private async callModel(): Promise<Turn> {
    const request: ModelRequest = { messages: this.messages, tools: this.specs };
    const signal = this.input.toolContext.signal;
    return this.input.streaming ? this.streamTurn(request, signal) : this.recogniseTextCalls(await this.model.complete(request, signal));
  }

  /**
   * Text goes out as it arrives, except (a) from a `task` that has not used a tool yet, since it
   * may be re-prompted, and (b) from where a tool call written as text may begin.
   */
  private async streamTurn(request: ModelRequest, signal: AbortSignal): Promise<Turn> {
    let text = '';
    let sent = 0;
    const toolCalls: ModelToolCall[] = [];
    for await (const part of this.model.stream(request, signal)) {
      if (part.type === 'tool-call') toolCalls.push(part.call);
      if (part.type !== 'text') continue;
      text += part.text;
      if (this.holdsBack()) continue;
      const safe = safeLength(text);
      if (safe > sent) {
        this.sendText(text.slice(sent, safe));
        sent = safe;
      }
    }
    const turn = this.recogniseTextCalls({ text, toolCalls });
    if (turn.toolCalls.length === 0 && !this.holdsBack() && sent < text.length) this.sendText(text.slice(sent));
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

/** Where text may start a tool call written as text: a `{`-led text, a fence, a `<tool_call>` tag. */
function safeLength(text: string): number {
  if (text.trimStart().startsWith('{')) return 0;
  const markers = ['```', '<tool_call'].map((marker) => text.indexOf(marker)).filter((i) => i >= 0);
  const partial = partialMarkerStart(text);
  return Math.min(text.length, ...markers, partial);
}

/** A marker cut across two deltas ("<tool_" then "call>") must not be sent half. */
function partialMarkerStart(text: string): number {
  for (const marker of ['```', '<tool_call']) {
    for (let n = Math.min(marker.length - 1, text.length); n > 0; n--) {
      if (text.endsWith(marker.slice(0, n))) return text.length - n;
    }
  }
  return text.length;
}
