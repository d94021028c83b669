import { boolean, index, integer, pgTable, text, timestamp, uniqueIndex, uuid, varchar } from 'drizzle-orm/pg-core';

/* The PostgreSQL twin of schema/sqlite.ts: same tables, columns and indexes. */

const ts = (name: string) => timestamp(name, { withTimezone: true, mode: 'date', precision: 3 });

export const conversations = pgTable(
  'conversations',
  {
    id: uuid('id').primaryKey(),
    userId: varchar('user_id', { length: 255 }).notNull(),
    agentType: varchar('agent_type', { length: 50 }).notNull().default('explore'),
    title: varchar('title', { length: 255 }),
    workingDir: varchar('working_dir', { length: 1024 }).notNull().default('.'),
    totalTokens: integer('total_tokens').notNull().default(0),
    lastSeq: integer('last_seq').notNull().default(0),
    createdAt: ts('created_at').notNull(),
    updatedAt: ts('updated_at'),
    lastActivityAt: ts('last_activity_at').notNull(),
    busyToken: uuid('busy_token'),
    busyUntil: ts('busy_until'),
  },
  (t) => [
    index('conversations_user_recent_idx').on(t.userId, t.lastActivityAt, t.id),
    index('conversations_activity_idx').on(t.lastActivityAt),
  ],
);

export const messages = pgTable(
  'messages',
  {
    id: uuid('id').primaryKey(),
    conversationId: uuid('conversation_id')
      .notNull()
      .references(() => conversations.id, { onDelete: 'cascade' }),
    seq: integer('seq').notNull(),
    role: varchar('role', { length: 20 }).notNull(),
    content: text('content').notNull(),
    tokenCount: integer('token_count').notNull().default(0),
    isSummary: boolean('is_summary').notNull().default(false),
    summarizesUpTo: uuid('summarizes_up_to'),
    createdAt: ts('created_at').notNull(),
  },
  (t) => [
    uniqueIndex('messages_conversation_seq_idx').on(t.conversationId, t.seq),
    index('messages_conversation_active_idx').on(t.conversationId, t.isSummary, t.seq),
    index('messages_conversation_role_idx').on(t.conversationId, t.role, t.seq),
  ],
);

export const userConversationCounts = pgTable('user_conversation_counts', {
  userId: varchar('user_id', { length: 255 }).primaryKey(),
  count: integer('count').notNull().default(0),
});
