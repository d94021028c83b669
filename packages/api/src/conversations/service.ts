import { randomUUID } from 'node:crypto';
import type { ConversationResponse, MessageResponse } from '@mada/protocol';
import type { ConversationRecord, ConversationRepository, MessageRecord } from '../db/repository.js';
import { ForbiddenError, NotFoundError } from '../errors.js';
import { titleFromContent } from './title.js';
import { countTokens } from './tokens.js';

export class ConversationNotFoundError extends NotFoundError {
  constructor() {
    super('Conversation not found');
  }
}

export interface ConversationServiceOptions {
  /** Idle conversations older than this are expired; 0 keeps them forever. */
  sessionTtlHours: number;
  now?: () => Date;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export const toConversationResponse = (r: ConversationRecord): ConversationResponse => ({
  id: r.id,
  agent_type: r.agentType,
  title: r.title,
  working_dir: r.workingDir,
  total_tokens: r.totalTokens,
  created_at: r.createdAt.toISOString(),
  updated_at: r.updatedAt ? r.updatedAt.toISOString() : null,
});

export const toMessageResponse = (r: MessageRecord): MessageResponse => ({
  id: r.id,
  role: r.role,
  content: r.content,
  token_count: r.tokenCount,
  is_summary: r.isSummary,
  created_at: r.createdAt.toISOString(),
});

/** Ownership, expiry, titles and token counts over the repository; no HTTP here. */
export class ConversationService {
  private readonly now: () => Date;

  constructor(
    readonly repository: ConversationRepository,
    private readonly options: ConversationServiceOptions,
  ) {
    this.now = options.now ?? (() => new Date());
  }

  /** Conversations last active before this instant are expired (null: nothing expires). */
  expiryCutoff(): Date | null {
    const ttlMs = this.options.sessionTtlHours * 3_600_000;
    return ttlMs > 0 ? new Date(this.now().getTime() - ttlMs) : null;
  }

  async create(userId: string, input: { agent_type: string; working_dir: string; title: string | null }): Promise<ConversationRecord> {
    return this.repository.createConversation({
      id: randomUUID(),
      userId,
      agentType: input.agent_type,
      workingDir: input.working_dir,
      title: input.title,
      now: this.now(),
    });
  }

  async list(userId: string, limit: number, offset: number): Promise<{ items: ConversationRecord[]; total: number }> {
    return this.repository.listConversations(userId, { limit, offset, activeSince: this.expiryCutoff() });
  }

  /** 404 when missing or expired (also for ids that are not UUIDs), then 403 when not the caller's. */
  async getOwned(id: string, userId: string): Promise<ConversationRecord> {
    const conversation = UUID.test(id) ? await this.repository.findConversation(id) : undefined;
    const cutoff = this.expiryCutoff();
    if (!conversation || (cutoff && conversation.lastActivityAt < cutoff)) throw new ConversationNotFoundError();
    if (conversation.userId !== userId) throw new ForbiddenError('Not authorized');
    return conversation;
  }

  async delete(id: string, userId: string): Promise<void> {
    await this.getOwned(id, userId);
    await this.repository.deleteConversation(id);
  }

  async messages(conversation: ConversationRecord): Promise<MessageRecord[]> {
    return this.repository.listMessages(conversation.id);
  }

  /** Stores messages in order; a first user message names an untitled conversation. */
  async append(
    conversation: ConversationRecord,
    messages: { role: string; content: string }[],
  ): Promise<{ conversation: ConversationRecord; messages: MessageRecord[] }> {
    const firstUser = messages.find((message) => message.role === 'user');
    const result = await this.repository.appendMessages(
      conversation.id,
      messages.map((message) => ({ id: randomUUID(), ...message, tokenCount: countTokens(message.content) })),
      { now: this.now(), titleIfUnset: firstUser ? titleFromContent(firstUser.content) : null },
    );
    // Deleted between the ownership check and the write.
    if (!result) throw new ConversationNotFoundError();
    return result;
  }
}
