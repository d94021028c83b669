import { randomUUID } from 'node:crypto';
import type { ConversationRecord, ConversationRepository, MessageRecord, NewMessage } from '../db/repository.js';
import { AgentFailedError, ConflictError } from '../errors.js';
import { buildContextPrompt } from './context-prompt.js';
import { ConversationNotFoundError, type ConversationService } from './service.js';
import { fallbackSummary, needsSummary, summarizeWithin, summaryInputLines, type SummarizationPolicy } from './summarizer.js';
import { titleFromContent } from './title.js';
import { countTokens } from '../tokens/count.js';

/** Re-exported for the routes that answer a failed turn. */
export { AgentFailedError };

export class ConversationBusyError extends ConflictError {
  constructor() {
    super('Conversation is busy');
  }
}

export interface TurnResult {
  userMessage: MessageRecord;
  assistantMessage: MessageRecord;
  totalTokens: number;
  summarized: boolean;
}

/** A turn's user message before it is stored (with its run, in one transaction). */
export interface DraftUserMessage {
  message: NewMessage;
  /** Becomes the conversation's title when it has none yet. */
  titleIfUnset: string;
}

/**
 * How a turn summarizes: an agent call made by the turn's run, under its signal, usage and log
 * (runs/conversation-job.ts); this module knows no agents.
 */
export interface Summarizer {
  /** Tokens a summarization prompt may have and still fit the model's window, the summarizing agent's tools counted. */
  room(): Promise<number>;
  /** The turn's model's context window, as the runtime reports it now. */
  window(): number;
  summarize(prompt: string): Promise<string>;
}

/**
 * The conversation's side of a turn, in the order docs/api.md gives: the user message (stored with
 * the turn's run), summarization if needed, the context prompt, and the answer stored. The run
 * that executes the turn calls these steps; one active run per conversation makes turns exclusive.
 */
export class TurnService {
  constructor(
    private readonly conversations: ConversationService,
    /** Summaries and recent messages: what ConversationService does not offer. */
    private readonly repository: ConversationRepository,
    private readonly policy: SummarizationPolicy,
    private readonly now: () => Date = () => new Date(),
  ) {}

  /** The user message of a turn, ready to be stored. */
  draftUserMessage(content: string): DraftUserMessage {
    return { message: { id: randomUUID(), role: 'user', content, tokenCount: countTokens(content) }, titleIfUnset: titleFromContent(content) };
  }

  /** What an earlier turn stored, named by its `done` event: for a retried request. */
  async storedResult(conversationId: string, done: { user_message_id: string; assistant_message_id: string; total_tokens: number; summarized: boolean }): Promise<TurnResult> {
    const [userMessage, assistantMessage] = await Promise.all([
      this.repository.findMessage(conversationId, done.user_message_id),
      this.repository.findMessage(conversationId, done.assistant_message_id),
    ]);
    // Deleted since, with their conversation.
    if (!userMessage || !assistantMessage) throw new ConversationNotFoundError();
    return { userMessage, assistantMessage, totalTokens: done.total_tokens, summarized: done.summarized };
  }

  /** docs/api.md, "Summarization"; returns whether summarization ran. */
  async summarizeIfNeeded(conversation: ConversationRecord, summarizer: Summarizer, signal: AbortSignal): Promise<boolean> {
    const active = await this.repository.countActiveMessages(conversation.id);
    if (!needsSummary(conversation.totalTokens, active, this.policy, summarizer.window())) return false;
    const [previous, messages] = await Promise.all([
      this.repository.latestSummary(conversation.id),
      this.repository.summarizableMessages(conversation.id, this.policy.keepRecentMessages),
    ]);
    const last = messages.at(-1);
    if (!last) return false;
    const lines = summaryInputLines(previous, messages);
    const content = await this.generateSummary(lines, summarizer, signal);
    await this.repository.applySummary(conversation.id, {
      id: randomUUID(),
      content,
      tokenCount: countTokens(content),
      upToSeq: last.seq,
      upToId: last.id,
      now: this.now(),
    });
    return true;
  }

  /** The context prompt: the active summary, the recent messages before the user's, and the user's. */
  async contextPrompt(conversationId: string, userMessage: MessageRecord): Promise<string> {
    const [summary, recent] = await Promise.all([
      this.repository.latestSummary(conversationId),
      this.repository.recentMessages(conversationId, this.policy.keepRecentMessages, userMessage.seq),
    ]);
    return buildContextPrompt(summary, recent, userMessage.content);
  }

  /** Stores the agent's answer: the turn's end. */
  async storeAnswer(conversation: ConversationRecord, userMessage: MessageRecord, answer: string, summarized: boolean): Promise<TurnResult> {
    const saved = await this.conversations.append(conversation, [{ role: 'assistant', content: answer }]);
    return { userMessage, assistantMessage: saved.messages[0]!, totalTokens: saved.conversation.totalTokens, summarized };
  }

  private async generateSummary(lines: string[], summarizer: Summarizer, signal: AbortSignal): Promise<string> {
    try {
      const text = await summarizeWithin(lines, await summarizer.room(), (prompt) => summarizer.summarize(prompt));
      if (text.trim() !== '') return text.trim();
    } catch {
      // A cancelled turn must not store a fallback as if generation had failed.
      if (signal.aborted) throw signal.reason;
    }
    return fallbackSummary(lines);
  }
}
