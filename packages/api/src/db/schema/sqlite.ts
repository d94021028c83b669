import { index, integer, sqliteTable, text, uniqueIndex } from 'drizzle-orm/sqlite-core';

/*
 * The SQLite twin of schema/postgres.ts: same tables, columns and indexes (drizzle needs one
 * builder per dialect). Timestamps are epoch milliseconds, which keeps ordering exact.
 */

export const conversations = sqliteTable(
  'conversations',
  {
    id: text('id').primaryKey(),
    userId: text('user_id', { length: 255 }).notNull(),
    agentType: text('agent_type', { length: 50 }).notNull().default('explore'),
    title: text('title', { length: 255 }),
    workingDir: text('working_dir', { length: 1024 }).notNull().default('.'),
    totalTokens: integer('total_tokens').notNull().default(0),
    /** Sequence number of the latest message: messages order by it, ties impossible. */
    lastSeq: integer('last_seq').notNull().default(0),
    createdAt: integer('created_at', { mode: 'timestamp_ms' }).notNull(),
    updatedAt: integer('updated_at', { mode: 'timestamp_ms' }),
    /** updated_at, or created_at while that is null: what lists order by and expiry measures. */
    lastActivityAt: integer('last_activity_at', { mode: 'timestamp_ms' }).notNull(),
    /** Lease held by the turn in progress, so a second concurrent turn is refused (409). */
    busyToken: text('busy_token'),
    busyUntil: integer('busy_until', { mode: 'timestamp_ms' }),
  },
  (t) => [
    index('conversations_user_recent_idx').on(t.userId, t.lastActivityAt, t.id),
    index('conversations_activity_idx').on(t.lastActivityAt),
  ],
);

export const messages = sqliteTable(
  'messages',
  {
    id: text('id').primaryKey(),
    conversationId: text('conversation_id')
      .notNull()
      .references(() => conversations.id, { onDelete: 'cascade' }),
    seq: integer('seq').notNull(),
    role: text('role', { length: 20 }).notNull(),
    content: text('content').notNull(),
    tokenCount: integer('token_count').notNull().default(0),
    isSummary: integer('is_summary', { mode: 'boolean' }).notNull().default(false),
    summarizesUpTo: text('summarizes_up_to'),
    createdAt: integer('created_at', { mode: 'timestamp_ms' }).notNull(),
  },
  (t) => [
    uniqueIndex('messages_conversation_seq_idx').on(t.conversationId, t.seq),
    index('messages_conversation_active_idx').on(t.conversationId, t.isSummary, t.seq),
    index('messages_conversation_role_idx').on(t.conversationId, t.role, t.seq),
  ],
);

/** Per-user conversation count, kept in the same transactions, so list totals cost O(1). */
export const userConversationCounts = sqliteTable('user_conversation_counts', {
  userId: text('user_id', { length: 255 }).primaryKey(),
  count: integer('count').notNull().default(0),
});
