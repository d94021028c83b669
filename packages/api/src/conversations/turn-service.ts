import { randomUUID } from 'node:crypto';
import type { AgentEvent, PermissionMode } from '@mada/protocol';
import type { ConversationRecord, ConversationRepository, MessageRecord } from '../db/repository.js';
import { AgentFailedError, ConflictError } from '../errors.js';
import { errorMessage } from '../util/error-message.js';
import { buildContextPrompt } from './context-prompt.js';
import { ConversationNotFoundError, type ConversationService } from './service.js';
import { fallbackSummary, needsSummary, summarizeWithin, summaryInputLines, type SummarizationPolicy } from './summarizer.js';
import { countTokens } from '../tokens/count.js';
import type { ApprovalGate } from '../tools/tool.js';
import type { Log } from '../util/log.js';

export interface AgentInvocation {
  agentType: string;
  mode: PermissionMode;
  prompt: string;
  workingDir: string;
  signal: AbortSignal;
  /** Streamed model calls; blocking turns make non-streaming ones. Defaults to whether onFrame is given. */
  streaming?: boolean;
  /** Progress of the run, for streamed turns. */
  onFrame?: (frame: AgentEvent) => void;
  /** Counters the agent adds its cost to (a stored run's usage), readable even if it fails. */
  usage?: UsageTotals;
  /** The run's logger (with its run_id). */
  log?: Log;
}

export interface UsageTotals {
  model_calls: number;
  tool_calls: number;
  input_tokens: number;
  output_tokens: number;
  /** Who answers the approval rules' asks during this turn (the turn's run). */
  approvalGate?: ApprovalGate;
  /** The run's checkpoint hook (see AgentEngine). */
  beforeModify?: () => Promise<void>;
}

/** Runs an agent to its final text; provided by the agent engine. Throws on failure. */
export type RunAgent = (invocation: AgentInvocation) => Promise<string>;

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

interface TurnContext {
  conversation: ConversationRecord;
  userMessage: MessageRecord;
  summarized: boolean;
  /** The context prompt: summary, recent messages and the new request. */
  prompt: string;
}

/** A turn whose user message is stored; run() it once, release() it once whatever happened. */
export interface PreparedTurn extends TurnContext {
  run(options: Omit<TurnOptions, 'onUserMessage'>): Promise<TurnResult>;
  release(): Promise<void>;
}

export interface TurnOptions {
  mode: PermissionMode;
  signal: AbortSignal;
  streaming?: boolean;
  onFrame?: (frame: AgentEvent) => void;
  usage?: UsageTotals;
  approvalGate?: ApprovalGate;
  beforeModify?: () => Promise<void>;
  log?: Log;
  /** Called once the user message is stored, before the agent runs. */
  onUserMessage?: (message: MessageRecord) => void;
}

/** How long a turn's lease lasts without renewal; a crashed process frees it after this. */
const LEASE_MS = 120_000;
const RENEW_MS = 30_000;

/**
 * One conversation turn, in the order docs/api.md gives: store the user message, summarize if needed, build
 * the context prompt, run the agent, store its answer. A turn holds a lease on the conversation
 * (in the database, so it holds across service replicas); a second concurrent turn gets 409.
 */
export class TurnService {
  constructor(
    private readonly conversations: ConversationService,
    /** Summaries, recent messages and the turn lease: what ConversationService does not offer. */
    private readonly repository: ConversationRepository,
    private readonly policy: SummarizationPolicy,
    private readonly runAgent: RunAgent,
    private readonly now: () => Date = () => new Date(),
    /** Tokens a summarization prompt may have to fit the model's window (unbounded when absent). */
    private readonly summaryRoom: (workingDir: string) => number = () => Number.POSITIVE_INFINITY,
  ) {}

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
    const release = await this.lease(conversation.id, randomUUID());
    return async (content, options) => {
      try {
        const prepared = await this.prepareOn(conversation, content, options.signal, options.onUserMessage);
        return await this.runPrepared(prepared, options);
      } finally {
        await release();
      }
    };
  }

  /**
   * The first half of a turn, for stored runs: ownership (404, 403), the lease (409, held under
   * `leaseToken` until release()), the user message stored and older messages summarized. The
   * agent runs later, possibly after the HTTP request has been answered.
   */
  async prepare(conversationId: string, userId: string, content: string, leaseToken: string, signal: AbortSignal): Promise<PreparedTurn> {
    const conversation = await this.conversations.getOwned(conversationId, userId);
    const release = await this.lease(conversation.id, leaseToken);
    try {
      const prepared = await this.prepareOn(conversation, content, signal);
      return { ...prepared, run: (options) => this.runPrepared(prepared, options), release };
    } catch (error) {
      await release();
      throw error;
    }
  }

  private async prepareOn(
    conversation: ConversationRecord,
    content: string,
    signal: AbortSignal,
    onUserMessage?: (message: MessageRecord) => void,
  ): Promise<TurnContext> {
    const stored = await this.conversations.append(conversation, [{ role: 'user', content }]);
    const userMessage = stored.messages[0]!;
    onUserMessage?.(userMessage);
    const summarized = await this.summarizeIfNeeded(stored.conversation, signal);
    const [summary, recent] = await Promise.all([
      this.repository.latestSummary(conversation.id),
      this.repository.recentMessages(conversation.id, this.policy.keepRecentMessages, userMessage.seq),
    ]);
    return { conversation: stored.conversation, userMessage, summarized, prompt: buildContextPrompt(summary, recent, content) };
  }

  /** The second half: the agent on the context prompt, then its answer stored. */
  private async runPrepared(turn: TurnContext, options: Omit<TurnOptions, 'onUserMessage'>): Promise<TurnResult> {
    let answer: string;
    try {
      answer = await this.runAgent({
        agentType: turn.conversation.agentType,
        mode: options.mode,
        prompt: turn.prompt,
        workingDir: turn.conversation.workingDir,
        signal: options.signal,
        ...(options.streaming === undefined ? {} : { streaming: options.streaming }),
        ...(options.onFrame ? { onFrame: options.onFrame } : {}),
        ...(options.usage ? { usage: options.usage } : {}),
        ...(options.approvalGate ? { approvalGate: options.approvalGate } : {}),
        ...(options.beforeModify ? { beforeModify: options.beforeModify } : {}),
        ...(options.log ? { log: options.log } : {}),
      });
    } catch (error) {
      throw new AgentFailedError(errorMessage(error));
    }
    const saved = await this.conversations.append(turn.conversation, [{ role: 'assistant', content: answer }]);
    return { userMessage: turn.userMessage, assistantMessage: saved.messages[0]!, totalTokens: saved.conversation.totalTokens, summarized: turn.summarized };
  }

  /** docs/api.md, "Summarization"; returns whether summarization ran. */
  private async summarizeIfNeeded(conversation: ConversationRecord, signal: AbortSignal): Promise<boolean> {
    const active = await this.repository.countActiveMessages(conversation.id);
    if (!needsSummary(conversation.totalTokens, active, this.policy)) return false;
    const [previous, messages] = await Promise.all([
      this.repository.latestSummary(conversation.id),
      this.repository.summarizableMessages(conversation.id, this.policy.keepRecentMessages),
    ]);
    const last = messages.at(-1);
    if (!last) return false;
    const lines = summaryInputLines(previous, messages);
    const content = await this.generateSummary(lines, conversation.workingDir, signal);
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

  private async generateSummary(lines: string[], workingDir: string, signal: AbortSignal): Promise<string> {
    try {
      const summarize = (prompt: string) => this.runAgent({ agentType: 'explore', mode: 'plan', prompt, workingDir, signal });
      const text = await summarizeWithin(lines, this.summaryRoom(workingDir), summarize);
      if (text.trim() !== '') return text.trim();
    } catch {
      // A cancelled turn must not store a fallback as if generation had failed.
      if (signal.aborted) throw signal.reason;
    }
    return fallbackSummary(lines);
  }

  /** Takes the conversation's turn lease (409 when held) and renews it until released. */
  private async lease(conversationId: string, token: string): Promise<() => Promise<void>> {
    const now = this.now();
    if (!(await this.repository.acquireTurn(conversationId, token, now, new Date(now.getTime() + LEASE_MS)))) {
      throw new ConversationBusyError();
    }
    const renewal = setInterval(() => {
      this.repository.renewTurn(conversationId, token, new Date(this.now().getTime() + LEASE_MS)).catch(() => undefined);
    }, RENEW_MS);
    renewal.unref();
    return async () => {
      clearInterval(renewal);
      await this.repository.releaseTurn(conversationId, token);
    };
  }
}
