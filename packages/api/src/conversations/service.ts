import { randomUUID } from 'node:crypto';
import type { ConversationResponse, MessageResponse } from '@mada/protocol';
import type { ConversationRecord, ConversationRepository, ListedMessage, MessageRecord } from '../db/repository.js';
import { ForbiddenError, NotFoundError } from '../errors.js';
import { titleFromContent } from './title.js';
import { countTokens } from '../tokens/count.js';

export class ConversationNotFoundError extends NotFoundError {
  constructor() {
    super('Conversation not found');
  }
}

export class ConversationLimitError extends ForbiddenError {
  constructor(max: number) {
    super(`Conversation limit reached (${max})`);
  }
}

export interface ConversationServiceOptions {
  /** Idle conversations older than this are expired; 0 keeps them forever. */
  sessionTtlHours: number;
  /** How many live conversations one user may have; creating one more is refused. */
  maxConversationsPerUser: number;
  /** Checks a conversation's working directory against its user's workspace when it is created (throws when not allowed). */
  checkWorkingDir?: (dir: string, userId: string) => Promise<void>;
  /** The configured model a creation names (absent: the default); throws for one not configured. Absent: stored as given. */
  resolveModel?: (name: string | undefined) => string;
  now?: () => Date;
}

/** Told the id of a conversation about to be deleted, so work running for it stops first. */
export type DeletionListener = (conversationId: string) => Promise<void>;

/** Messages one read of a whole history holds at most (fewer when they are large: HISTORY_PAGE_BYTES). */
const HISTORY_PAGE_COUNT = 64;
/**
 * Content one page of a whole-history read holds at most. Readers of long histories take turns on
 * the event loop, so a page lives through several young-generation collections: a page of 1 MiB
 * was kept long enough to be moved to the old generation, where the pages of six readers of a
 * 60 MB history piled up as some 100 MB of garbage before a full collection. A quarter of that
 * dies young.
 */
const HISTORY_PAGE_BYTES = 256 * 1024;

/** A message's response fields but its content. */
export type MessageFields = Omit<MessageResponse, 'content'>;

/**
 * A message to send: its content whole, or, for a message over a page (MESSAGE_PAGE_BYTES), its
 * content in slices, read off the event loop only as they are sent.
 */
export interface OutgoingMessage {
  fields: MessageFields;
  content: string | AsyncIterable<string>;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export const toConversationResponse = (r: ConversationRecord): ConversationResponse => ({
  id: r.id,
  agent_type: r.agentType,
  title: r.title,
  working_dir: r.workingDir,
  model: r.model,
  total_tokens: r.totalTokens,
  created_at: r.createdAt.toISOString(),
  updated_at: r.updatedAt ? r.updatedAt.toISOString() : null,
});

export const toMessageResponse = (r: MessageRecord): MessageResponse => ({ ...messageFields(r), content: r.content });

/** In MessageResponse's order but for the content, which goes between role and token_count. */
const messageFields = (r: Omit<MessageRecord, 'content'>): MessageFields => ({
  id: r.id,
  role: r.role,
  token_count: r.tokenCount,
  is_summary: r.isSummary,
  created_at: r.createdAt.toISOString(),
});

/** Ownership, expiry, titles and token counts over the repository; no HTTP here. */
export class ConversationService {
  private readonly now: () => Date;
  private readonly deletionListeners: DeletionListener[] = [];

  constructor(
    private readonly repository: ConversationRepository,
    private readonly options: ConversationServiceOptions,
  ) {
    this.now = options.now ?? (() => new Date());
  }

  /** Conversations last active before this instant are expired (null: nothing expires). */
  expiryCutoff(): Date | null {
    const ttlMs = this.options.sessionTtlHours * 3_600_000;
    return ttlMs > 0 ? new Date(this.now().getTime() - ttlMs) : null;
  }

  /** Throws when the database does not answer (the health check). */
  async ping(): Promise<void> {
    await this.repository.ping();
  }

  /** Deletes the expired conversations; how many went. */
  async deleteExpired(): Promise<number> {
    const cutoff = this.expiryCutoff();
    return cutoff ? this.repository.deleteIdleSince(cutoff) : 0;
  }

  /**
   * Checks the working directory (the agent type is checked when a turn runs) and the caller's
   * conversation count, the count in the same transaction as the insert: creations racing at the
   * limit store exactly up to it.
   */
  async create(userId: string, input: { agent_type: string; working_dir: string; title: string | null; model?: string | undefined }): Promise<ConversationRecord> {
    // The name stored is the configured one the default resolves to now: the conversation keeps it.
    const model = this.options.resolveModel?.(input.model) ?? input.model ?? null;
    await this.options.checkWorkingDir?.(input.working_dir, userId);
    const max = this.options.maxConversationsPerUser;
    const created = await this.repository.createConversationWithin(
      { id: randomUUID(), userId, agentType: input.agent_type, workingDir: input.working_dir, title: input.title, model, now: this.now() },
      { max, activeSince: this.expiryCutoff() },
    );
    if (created === undefined) throw new ConversationLimitError(max);
    return created;
  }

  async list(userId: string, limit: number, offset: number): Promise<{ items: ConversationRecord[]; total: number }> {
    return this.repository.listConversations(userId, { limit, offset, activeSince: this.expiryCutoff() });
  }

  /**
   * 404 when missing or expired (also for ids that are not UUIDs), then 403 when not the caller's.
   * Ids are stored in lower case; an id in upper case names the same conversation on both databases.
   */
  async getOwned(id: string, userId: string): Promise<ConversationRecord> {
    const conversation = UUID.test(id) ? await this.repository.findConversation(id.toLowerCase()) : undefined;
    const cutoff = this.expiryCutoff();
    if (!conversation || (cutoff && conversation.lastActivityAt < cutoff)) throw new ConversationNotFoundError();
    if (conversation.userId !== userId) throw new ForbiddenError('Not authorized');
    return conversation;
  }

  /** Stops what runs for the conversation (a turn in progress is cancelled), then deletes it. */
  async delete(id: string, userId: string): Promise<void> {
    const conversation = await this.getOwned(id, userId);
    for (const listener of this.deletionListeners) await listener(conversation.id);
    await this.repository.deleteConversation(conversation.id);
  }

  onDeleted(listener: DeletionListener): void {
    this.deletionListeners.push(listener);
  }

  /** The whole history, oldest first, a bounded page at a time however long it is. */
  async *messagePages(conversation: ConversationRecord): AsyncGenerator<OutgoingMessage[]> {
    for (let afterSeq = 0; ; ) {
      const page = await this.repository.messagesAfter(conversation.id, afterSeq, HISTORY_PAGE_COUNT, HISTORY_PAGE_BYTES);
      if (page.length === 0) return;
      yield page.map((message) => this.outgoing(message));
      afterSeq = page.at(-1)!.seq;
    }
  }

  /**
   * The `limit` messages just before message `beforeId` (or the latest), oldest first; fewer when
   * they are large (MESSAGE_PAGE_BYTES), `hasMore` saying older ones exist either way.
   * Undefined when `beforeId` is not a message of this conversation.
   */
  async messagePage(
    conversation: ConversationRecord,
    limit: number,
    beforeId: string | undefined,
  ): Promise<{ messages: OutgoingMessage[]; hasMore: boolean } | undefined> {
    let beforeSeq: number | null = null;
    if (beforeId !== undefined) {
      const seq = UUID.test(beforeId) ? await this.repository.messageSeq(conversation.id, beforeId.toLowerCase()) : undefined;
      if (seq === undefined) return undefined;
      beforeSeq = seq;
    }
    const page = await this.repository.messagesBefore(conversation.id, beforeSeq, limit);
    return { messages: page.messages.map((message) => this.outgoing(message)), hasMore: page.hasMore };
  }

  private outgoing(message: ListedMessage): OutgoingMessage {
    return { fields: messageFields(message), content: message.content ?? this.repository.contentSlices(message.id) };
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
