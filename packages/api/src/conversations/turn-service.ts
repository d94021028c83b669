import { randomUUID } from 'node:crypto';
import type { PermissionMode, StreamFrame } from '@mada/protocol';
import type { ConversationRecord, MessageRecord } from '../db/repository.js';
import { AppError, ConflictError } from '../errors.js';
import { buildContextPrompt } from './context-prompt.js';
import type { ConversationService } from './service.js';
import { fallbackSummary, needsSummary, summaryInputLines, summaryPrompt, type SummarizationPolicy } from './summarizer.js';
import { countTokens } from './tokens.js';

export interface AgentInvocation {
  agentType: string;
  mode: PermissionMode;
  prompt: string;
  workingDir: string;
  signal: AbortSignal;
  /** Progress of the run, for streamed turns. */
  onFrame?: (frame: StreamFrame) => void;
}

/** Runs an agent to its final text; provided by the agent engine. Throws on failure. */
export type RunAgent = (invocation: AgentInvocation) => Promise<string>;

export class AgentFailedError extends AppError {
  constructor(readonly reason: string) {
    super(500, `Agent error: ${reason}`);
  }
}

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

export interface TurnOptions {
  mode: PermissionMode;
  signal: AbortSignal;
  onFrame?: (frame: StreamFrame) => void;
  /** Called once the user message is stored, before the agent runs. */
  onUserMessage?: (message: MessageRecord) => void;
}

/** How long a turn's lease lasts without renewal; a crashed process frees it after this. */
const LEASE_MS = 120_000;
const RENEW_MS = 30_000;

const messageOf = (error: unknown): string => (error instanceof Error ? error.message : String(error));

/**
 * One conversation turn, in SPEC.md's order: store the user message, summarize if needed, build
 * the context prompt, run the agent, store its answer. A turn holds a lease on the conversation
 * (in the database, so it holds across service replicas); a second concurrent turn gets 409.
 */
export class TurnService {
  constructor(
    private readonly conversations: ConversationService,
    private readonly policy: SummarizationPolicy,
    private readonly runAgent: RunAgent,
    private readonly now: () => Date = () => new Date(),
  ) {}

  async addMessage(conversationId: string, userId: string, content: string, options: TurnOptions): Promise<TurnResult> {
    const turn = await this.open(conversationId, userId);
    return turn(content, options);
  }

  /**
   * Checks ownership (404, 403) and takes the lease (409) before anything is stored, so a
   * streamed turn can still answer with a status; the returned function runs the turn once and
   * always gives the lease back.
   */
  async open(conversationId: string, userId: string): Promise<(content: string, options: TurnOptions) => Promise<TurnResult>> {
    const conversation = await this.conversations.getOwned(conversationId, userId);
    const release = await this.lease(conversation.id);
    return async (content, options) => {
      try {
        return await this.turn(conversation, content, options);
      } finally {
        await release();
      }
    };
  }

  private async turn(conversation: ConversationRecord, content: string, options: TurnOptions): Promise<TurnResult> {
    const stored = await this.conversations.append(conversation, [{ role: 'user', content }]);
    const userMessage = stored.messages[0]!;
    options.onUserMessage?.(userMessage);
    const summarized = await this.summarizeIfNeeded(stored.conversation, options.signal);
    const repository = this.conversations.repository;
    const [summary, recent] = await Promise.all([
      repository.latestSummary(conversation.id),
      repository.recentMessages(conversation.id, this.policy.keepRecentMessages, userMessage.seq),
    ]);
    let answer: string;
    try {
      answer = await this.runAgent({
        agentType: conversation.agentType,
        mode: options.mode,
        prompt: buildContextPrompt(summary, recent, content),
        workingDir: conversation.workingDir,
        signal: options.signal,
        ...(options.onFrame ? { onFrame: options.onFrame } : {}),
      });
    } catch (error) {
      throw new AgentFailedError(messageOf(error));
    }
    const saved = await this.conversations.append(stored.conversation, [{ role: 'assistant', content: answer }]);
    return { userMessage, assistantMessage: saved.messages[0]!, totalTokens: saved.conversation.totalTokens, summarized };
  }

  /** SPEC.md section 3; returns whether summarization ran. */
  private async summarizeIfNeeded(conversation: ConversationRecord, signal: AbortSignal): Promise<boolean> {
    const repository = this.conversations.repository;
    const active = await repository.countActiveMessages(conversation.id);
    if (!needsSummary(conversation.totalTokens, active, this.policy)) return false;
    const [previous, messages] = await Promise.all([
      repository.latestSummary(conversation.id),
      repository.summarizableMessages(conversation.id, this.policy.keepRecentMessages),
    ]);
    const last = messages.at(-1);
    if (!last) return false;
    const lines = summaryInputLines(previous, messages);
    const content = await this.generateSummary(lines, conversation.workingDir, signal);
    await repository.applySummary(conversation.id, {
      id: randomUUID(),
      content,
      tokenCount: countTokens(content),
      upToSeq: last.seq,
      upToId: last.id,
      now: this.now(),
    });
    return true;
  }

  private async generateSummary(lines: string[], workingDir: string, signal: AbortSignal): Promise<string> {
    try {
      const text = await this.runAgent({ agentType: 'explore', mode: 'plan', prompt: summaryPrompt(lines), workingDir, signal });
      if (text.trim() !== '') return text.trim();
    } catch {
      // A cancelled turn must not store a fallback as if generation had failed.
      if (signal.aborted) throw signal.reason;
    }
    return fallbackSummary(lines);
  }

  /** Takes the conversation's turn lease (409 when held) and renews it until released. */
  private async lease(conversationId: string): Promise<() => Promise<void>> {
    const repository = this.conversations.repository;
    const token = randomUUID();
    const now = this.now();
    if (!(await repository.acquireTurn(conversationId, token, now, new Date(now.getTime() + LEASE_MS)))) {
      throw new ConversationBusyError();
    }
    const renewal = setInterval(() => {
      repository.renewTurn(conversationId, token, new Date(this.now().getTime() + LEASE_MS)).catch(() => undefined);
    }, RENEW_MS);
    renewal.unref();
    return async () => {
      clearInterval(renewal);
      await repository.releaseTurn(conversationId, token);
    };
  }
}
