/**
 * The one interface the rest of the service uses for stored conversations. Two implementations
 * (sqlite-repository.ts, postgres-repository.ts) pass the same test suite.
 */

export interface ConversationRecord {
  id: string;
  userId: string;
  agentType: string;
  title: string | null;
  workingDir: string;
  totalTokens: number;
  lastSeq: number;
  createdAt: Date;
  updatedAt: Date | null;
  lastActivityAt: Date;
  busyToken: string | null;
  busyUntil: Date | null;
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

export interface NewConversation {
  id: string;
  userId: string;
  agentType: string;
  title: string | null;
  workingDir: string;
  now: Date;
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
  ping(): Promise<void>;
  createConversation(input: NewConversation): Promise<ConversationRecord>;
  findConversation(id: string): Promise<ConversationRecord | undefined>;
  listConversations(userId: string, page: ListPage): Promise<{ items: ConversationRecord[]; total: number }>;
  /** False when it was already gone. Its messages go with it. */
  deleteConversation(id: string): Promise<boolean>;
  /**
   * Stores messages in order and adds their tokens to total_tokens in one atomic step, so
   * concurrent appends on one conversation lose nothing. Undefined when the conversation is gone.
   */
  appendMessages(conversationId: string, messages: NewMessage[], options: AppendOptions): Promise<AppendResult | undefined>;
  listMessages(conversationId: string): Promise<MessageRecord[]>;
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
  /** Takes the turn lease unless another live one holds it; false when busy. */
  acquireTurn(conversationId: string, token: string, now: Date, until: Date): Promise<boolean>;
  /** Extends a lease this token holds. */
  renewTurn(conversationId: string, token: string, until: Date): Promise<void>;
  releaseTurn(conversationId: string, token: string): Promise<void>;
  /** Deletes conversations idle since before `cutoff`; returns how many. */
  deleteIdleSince(cutoff: Date): Promise<number>;
  close(): Promise<void>;
}
