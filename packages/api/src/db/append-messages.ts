import { eq, sql } from 'drizzle-orm';
import type { Db, DialectAdapter } from './dialect.js';
import type { AppendOptions, AppendResult, NewMessage } from './repository.js';
import { messageRows, tokensOf } from './rows.js';

/**
 * Stores messages at the end of a conversation inside the transaction `tx`: the conversation row
 * is updated first (on PostgreSQL that locks it until commit, so concurrent appends serialize and
 * last_seq / total_tokens stay exact). Undefined when the conversation is gone.
 */
export async function appendMessagesIn(
  tables: DialectAdapter['tables'],
  tx: Db,
  conversationId: string,
  batch: readonly NewMessage[],
  options: AppendOptions,
): Promise<AppendResult | undefined> {
  const { conversations: c, messages: m } = tables;
  const tokens = tokensOf(batch);
  const [conversation] = await tx
    .update(c)
    .set({
      totalTokens: sql`${c.totalTokens} + ${tokens}`,
      lastSeq: sql`${c.lastSeq} + ${batch.length}`,
      updatedAt: options.now,
      lastActivityAt: options.now,
      // The cast gives the parameter a type PostgreSQL can infer and SQLite accepts.
      title: sql`coalesce(${c.title}, cast(${options.titleIfUnset} as varchar(255)))`,
    })
    .where(eq(c.id, conversationId))
    .returning();
  if (!conversation) return undefined;
  const rows = messageRows(conversationId, batch, conversation.lastSeq - batch.length + 1, options.now);
  const stored = rows.length > 0 ? await tx.insert(m).values(rows).returning() : [];
  return { conversation, messages: stored };
}
