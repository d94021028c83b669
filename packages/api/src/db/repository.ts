import type { SandboxActivityTable } from './sandbox-activity.js';
import type { ApprovalRepository } from './approval-repository.js';
import type { RunRepository } from './run-repository.js';
import type { AuditRepository } from './audit-repository.js';
import type { WebhookRepository } from './webhook-repository.js';
import type { UserRepository } from './user-repository.js';
import type { ConsoleSessionRepository } from './console-session-repository.js';

/**
 * The one interface the rest of the service uses for stored conversations, implemented once over
 * drizzle for SQLite and PostgreSQL (drizzle-repository.ts).
 */

export interface ConversationRecord {
  id: string;
  userId: string;
  agentType: string;
  title: string | null;
  workingDir: string;
  /** The configured model its turns use; null: the service's default (conversations from before). */
  model: string | null;
  totalTokens: number;
  lastSeq: number;
  createdAt: Date;
  updatedAt: Date | null;
  lastActivityAt: Date;
}

export interface MessageRecord {
  id: string;
  conversationId: string;
  seq: number;
  role: string;
  content: string;
  tokenCount: number;
  isSummary: boolean;
  summarizesUpTo: string | null;
  createdAt: Date;
}

/**
 * Content bytes one page of messages holds at most (its first message always counts): a page is
 * read, held and written in one go. A message larger than this comes without its content
 * (ListedMessage), which is read off the event loop and sent in slices (`contentSlices`).
 */
export const MESSAGE_PAGE_BYTES = 1024 * 1024;

/** A message as a page of a history gives it. */
export interface ListedMessage extends Omit<MessageRecord, 'content'> {
  /** Null when the content is over MESSAGE_PAGE_BYTES: read it with `contentSlices`. */
  content: string | null;
}

export interface NewConversation {
  id: string;
  userId: string;
  agentType: string;
  title: string | null;
  workingDir: string;
  /** Absent: null, the default model. */
  model?: string | null;
  now: Date;
}

/** How many live conversations one user may have: those active since `activeSince` (all when null). */
export interface ConversationLimit {
  max: number;
  activeSince: Date | null;
}

export interface NewMessage {
  id: string;
  role: string;
  content: string;
  tokenCount: number;
}

export interface ListPage {
  limit: number;
  offset: number;
  /** Conversations whose last activity is before this instant are expired and left out; null keeps all. */
  activeSince: Date | null;
}

export interface AppendOptions {
  now: Date;
  /** Becomes the title when the conversation has none yet. */
  titleIfUnset: string | null;
}

export interface AppendResult {
  conversation: ConversationRecord;
  messages: MessageRecord[];
}

export interface MessagePage {
  /** Oldest first. */
  messages: ListedMessage[];
  /** Older messages exist before the first one. */
  hasMore: boolean;
}

export interface NewSummary {
  id: string;
  content: string;
  tokenCount: number;
  /** Every non-summary message up to this sequence number is summarized away. */
  upToSeq: number;
  /** Id of the last summarized message (summarizes_up_to). */
  upToId: string;
  now: Date;
}

export interface ConversationRepository {
  readonly dialect: 'sqlite' | 'postgres';
  /** Stored runs and their events, on the same database (deleting a conversation deletes its runs). */
  readonly runs: RunRepository;
  /** Approvals of those runs and the users' approve_always grants. */
  readonly approvals: ApprovalRepository;
  /** Stored users and their keys. */
  readonly users: UserRepository;
  /** The browser console's sign-ins. */
  readonly consoleSessions: ConsoleSessionRepository;
  /** The hash-chained audit log. */
  readonly audit: AuditRepository;
  /** Users' webhooks and their stored deliveries. */
  readonly webhooks: WebhookRepository;
  /**
   * Where service replicas record their `bash` commands and first repository censuses: PostgreSQL
   * only; undefined on SQLite, whose one process coordinates within itself.
   */
  readonly sandboxActivity: SandboxActivityTable | undefined;
  ping(): Promise<void>;
  /**
   * Stores the conversation unless its user already has `limit.max` live ones (then stores nothing
   * and answers undefined). Count and insert are one step: concurrent creations for one user at
   * the limit never store more than the limit.
   */
  createConversationWithin(input: NewConversation, limit: ConversationLimit): Promise<ConversationRecord | undefined>;
  findConversation(id: string): Promise<ConversationRecord | undefined>;
  listConversations(userId: string, page: ListPage): Promise<{ items: ConversationRecord[]; total: number }>;
  /** False when it was already gone. Its messages go with it. */
  deleteConversation(id: string): Promise<boolean>;
  /**
   * Stores messages in order and adds their tokens to total_tokens in one atomic step, so
   * concurrent appends on one conversation lose nothing. Undefined when the conversation is gone.
   */
  appendMessages(conversationId: string, messages: NewMessage[], options: AppendOptions): Promise<AppendResult | undefined>;
  /**
   * Messages after sequence `afterSeq`, oldest first: at most `count`, and no more than fit in
   * `bytes` of content (MESSAGE_PAGE_BYTES unless given; always at least one), so whole histories
   * are read in pages of bounded size. Sizes are read before contents: a page of huge messages is
   * cut before any loads. Contents over MESSAGE_PAGE_BYTES are left out whatever `bytes` is.
   */
  messagesAfter(conversationId: string, afterSeq: number, count: number, bytes?: number): Promise<ListedMessage[]>;
  /**
   * The messages just before sequence `beforeSeq` (null: the latest), oldest first: at most
   * `limit`, and fewer when the newest of them already fill MESSAGE_PAGE_BYTES (always at least
   * one). `hasMore` says older ones exist, so the first message's seq is the next page's cursor.
   */
  messagesBefore(conversationId: string, beforeSeq: number | null, limit: number): Promise<MessagePage>;
  /** The seq of a message of this conversation; undefined when it belongs to no or another conversation. */
  messageSeq(conversationId: string, messageId: string): Promise<number | undefined>;
  /**
   * A large message's content (ListedMessage with null content) as text, in slices of a few
   * hundred KiB, loaded off the event loop; nothing when the message is gone.
   */
  contentSlices(messageId: string): AsyncIterable<string>;
  /** A message of this conversation; undefined when it belongs to no or another conversation. */
  findMessage(conversationId: string, messageId: string): Promise<MessageRecord | undefined>;
  /** Non-summary messages, at most `limit` of the latest before sequence `beforeSeq`, oldest first. */
  recentMessages(conversationId: string, limit: number, beforeSeq: number): Promise<MessageRecord[]>;
  /** The latest `summary` message: the one that is still active. */
  latestSummary(conversationId: string): Promise<MessageRecord | undefined>;
  countActiveMessages(conversationId: string): Promise<number>;
  /** Non-summary messages except the latest `keepRecent`, oldest first. */
  summarizableMessages(conversationId: string, keepRecent: number): Promise<MessageRecord[]>;
  /**
   * In one transaction: flags the summarized messages, supersedes the previous summary, stores the
   * new one and keeps total_tokens = sum over active messages.
   */
  applySummary(conversationId: string, summary: NewSummary): Promise<{ conversation: ConversationRecord; summary: MessageRecord } | undefined>;
  /** Deletes conversations idle since before `cutoff`; returns how many. */
  deleteIdleSince(cutoff: Date): Promise<number>;
  close(): Promise<void>;
}
