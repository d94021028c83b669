import { countTokens, TOKENS_PER_MESSAGE, TOKENS_PER_REPLY } from '../tokens/count.js';
import type { ChatMessage, ToolDefinition } from '../model/index.js';

/** Kept free for the answer: a quarter of the window, at most 4,096 tokens. */
export const answerReserve = (window: number): number => Math.min(4096, Math.floor(window / 4));

/** Framing a runtime adds around a tool call or a tool result (ids, names, tags). */
const CALL_FRAMING = 12;

const placeholder = (tool: string): string => `[Output of ${tool} removed to keep the context window small. Call the tool again if you need it.]`;
const isPlaceholder = (content: string): boolean => content.startsWith('[Output of ');

export class ContextOverflowError extends Error {
  constructor(needed: number, window: number) {
    const reserve = answerReserve(window);
    super(
      `The request does not fit the model's context window: ${needed} tokens needed, ${window - reserve} available ` +
        `(window ${window} tokens, ${reserve} kept for the answer). Use a model or runtime with a larger context (LLM_NUM_CTX), or a shorter prompt.`,
    );
    this.name = 'ContextOverflowError';
  }
}

/**
 * Tool lists and system prompts are few (one per agent, mode and working directory) and each run
 * sends the same ones again: counted once per distinct text, which spares every run's start a
 * tokenizer pass over several KB (under a hundred runs starting at once, a visible part of each
 * start).
 */
const repeatedCounts = new Map<string, number>();
const MAX_REPEATED_TEXTS = 64;

function countRepeated(text: string): number {
  let count = repeatedCounts.get(text);
  if (count === undefined) {
    count = countTokens(text);
    if (repeatedCounts.size >= MAX_REPEATED_TEXTS) repeatedCounts.clear();
    repeatedCounts.set(text, count);
  }
  return count;
}

/**
 * Counts what a request costs with the tokenizer and makes the run's messages fit the window:
 * older tool results are replaced by a placeholder (oldest first, the newest last); if even then
 * the request is too large, ContextOverflowError, and nothing is sent. Counts are kept per
 * message object, so each message is tokenized once.
 */
export class ContextBudget {
  private readonly counts = new WeakMap<ChatMessage, number>();
  private readonly toolCounts = new WeakMap<readonly ToolDefinition[], number>();

  messageTokens(message: ChatMessage): number {
    let count = this.counts.get(message);
    if (count === undefined) {
      const calls =
        message.role === 'assistant' && message.toolCalls?.length
          ? countTokens(JSON.stringify(message.toolCalls.map((call) => ({ name: call.name, arguments: call.arguments })))) + CALL_FRAMING
          : 0;
      const content = message.role === 'system' ? countRepeated(message.content) : countTokens(message.content);
      count = content + calls + (message.role === 'tool' ? CALL_FRAMING : 0) + TOKENS_PER_MESSAGE;
      this.counts.set(message, count);
    }
    return count;
  }

  toolTokens(tools: readonly ToolDefinition[]): number {
    let count = this.toolCounts.get(tools);
    if (count === undefined) {
      count = tools.length === 0 ? 0 : countRepeated(JSON.stringify(tools));
      this.toolCounts.set(tools, count);
    }
    return count;
  }

  requestTokens(messages: readonly ChatMessage[], tools: readonly ToolDefinition[]): number {
    return messages.reduce((sum, message) => sum + this.messageTokens(message), TOKENS_PER_REPLY + this.toolTokens(tools));
  }

  /** Masks tool results in `messages` until the request fits; returns how many were masked. */
  fit(messages: ChatMessage[], tools: readonly ToolDefinition[], window: number): number {
    const available = window - answerReserve(window);
    let total = this.requestTokens(messages, tools);
    let masked = 0;
    for (let index = 0; total > available && index < messages.length; index++) {
      const message = messages[index]!;
      if (message.role !== 'tool' || isPlaceholder(message.content)) continue;
      const replacement = { ...message, content: placeholder(message.toolName) };
      total += this.messageTokens(replacement) - this.messageTokens(message);
      messages[index] = replacement;
      masked++;
    }
    if (total > available) throw new ContextOverflowError(total, window);
    return masked;
  }
}

/** Slack for what a prompt-room estimate cannot see (the working directory's length, framing). */
const ROOM_SLACK = 64;

/**
 * Tokens left for the user prompt of a request that otherwise holds only `system` and `tools`:
 * what a caller may put in one prompt and still have it sent.
 */
export function promptRoom(window: number, system: ChatMessage, tools: readonly ToolDefinition[]): number {
  const budget = new ContextBudget();
  return window - answerReserve(window) - budget.requestTokens([system], tools) - TOKENS_PER_MESSAGE - ROOM_SLACK;
}
