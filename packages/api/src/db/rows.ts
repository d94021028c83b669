import type { MessageRecord, NewMessage, NewSummary } from './repository.js';

/* Row building for the repository, kept apart from its statements. */

/** Stored messages for a batch whose first sequence number is `firstSeq`. */
export function messageRows(conversationId: string, batch: readonly NewMessage[], firstSeq: number, now: Date): MessageRecord[] {
  return batch.map((message, i) => ({
    ...message,
    conversationId,
    seq: firstSeq + i,
    isSummary: false,
    summarizesUpTo: null,
    createdAt: now,
  }));
}

export function summaryRow(conversationId: string, summary: NewSummary, seq: number): MessageRecord {
  return {
    id: summary.id,
    conversationId,
    seq,
    role: 'summary',
    content: summary.content,
    tokenCount: summary.tokenCount,
    isSummary: true,
    summarizesUpTo: summary.upToId,
    createdAt: summary.now,
  };
}

/** How many deleted conversations each user had, to keep the per-user counts right. */
export function countPerUser(deleted: readonly { userId: string }[]): Map<string, number> {
  const perUser = new Map<string, number>();
  for (const { userId } of deleted) perUser.set(userId, (perUser.get(userId) ?? 0) + 1);
  return perUser;
}

export const tokensOf = (batch: readonly NewMessage[]): number => batch.reduce((sum, message) => sum + message.tokenCount, 0);
