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
  /** Deletes conversations idle since before `cutoff`; returns how many. */
  deleteIdleSince(cutoff: Date): Promise<number>;
  close(): Promise<void>;
}
