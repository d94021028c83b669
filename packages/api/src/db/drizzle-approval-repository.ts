import { and, desc, eq, sql } from 'drizzle-orm';
import type { NewAuditEntry } from './audit-repository.js';
import type { DialectAdapter } from './dialect.js';
import { appendAuditIn } from './drizzle-audit-repository.js';
import type { DeliveryOutbox } from './webhook-deliveries.js';
import type { ApprovalGrant, ApprovalRecord, ApprovalRepository, ApprovalStatus, NewApproval } from './approval-repository.js';

/** Approvals over drizzle, for both dialects. Deciding is one conditional UPDATE: the first answer wins. */
export class DrizzleApprovalRepository implements ApprovalRepository {
  private readonly t;

  constructor(
    private readonly adapter: DialectAdapter,
    private readonly outbox: DeliveryOutbox,
  ) {
    this.t = adapter.tables;
  }

  createApproval(input: NewApproval): Promise<ApprovalRecord> {
    const { approvals: a, runs: r } = this.t;
    return this.outbox.transaction(async (tx, notice) => {
      const [stored] = await tx.insert(a).values({ ...input, status: 'pending' }).returning();
      await tx
        .update(r)
        .set({ status: 'waiting_approval' })
        .where(and(eq(r.id, input.runId), eq(r.status, 'running')));
      await notice(input.userId, { event: 'approval_requested', at: input.createdAt, runId: input.runId, approvalId: input.id, tool: input.tool });
      return stored!;
    });
  }

  findApproval(id: string): Promise<ApprovalRecord | undefined> {
    const a = this.t.approvals;
    return this.adapter.run(async (db) => (await db.select().from(a).where(eq(a.id, id)))[0]);
  }

  listApprovals(userId: string, status: ApprovalStatus | null): Promise<{ items: ApprovalRecord[]; total: number }> {
    const a = this.t.approvals;
    const matching = status ? and(eq(a.userId, userId), eq(a.status, status)) : eq(a.userId, userId);
    // One statement: on PostgreSQL two would run on two connections, and a list read before an
    // approval was stored could come with a total counted after (total 1, no approval).
    return this.adapter.run(async (db) => {
      const rows = await db
        .select({ approval: a, total: sql<number>`count(*) over ()`.mapWith(Number) })
        .from(a)
        .where(matching)
        .orderBy(desc(a.createdAt), desc(a.id))
        .limit(100);
      return { items: rows.map((row) => row.approval), total: rows[0]?.total ?? 0 };
    });
  }

  decideApproval(
    id: string,
    decision: { status: 'approved' | 'denied'; message: string | null; now: Date },
    audit?: (decided: ApprovalRecord) => NewAuditEntry,
  ): Promise<ApprovalRecord | undefined> {
    const a = this.t.approvals;
    return this.adapter.transaction(async (tx) => {
      const [decided] = await tx
        .update(a)
        .set({ status: decision.status, message: decision.message, decidedAt: decision.now })
        .where(and(eq(a.id, id), eq(a.status, 'pending')))
        .returning();
      if (decided && audit) await appendAuditIn(this.adapter, tx, audit(decided));
      return decided;
    });
  }

  denyPendingOfRun(runId: string, message: string, now: Date): Promise<string[]> {
    const a = this.t.approvals;
    return this.adapter.run(async (db) => {
      const rows = await db
        .update(a)
        .set({ status: 'denied', message, decidedAt: now })
        .where(and(eq(a.runId, runId), eq(a.status, 'pending')))
        .returning({ id: a.id });
      return rows.map((row) => row.id);
    });
  }

  async addGrant(grant: ApprovalGrant, now: Date, audit?: NewAuditEntry): Promise<void> {
    const g = this.t.approvalGrants;
    await this.adapter.transaction(async (tx) => {
      const added = await tx.insert(g).values({ ...grant, createdAt: now }).onConflictDoNothing().returning({ userId: g.userId });
      if (added.length > 0 && audit) await appendAuditIn(this.adapter, tx, audit);
    });
  }

  grantedMatches(userId: string, workingDir: string, tool: string): Promise<string[]> {
    const g = this.t.approvalGrants;
    return this.adapter.run(async (db) => {
      const rows = await db
        .select({ match: g.match })
        .from(g)
        .where(and(eq(g.userId, userId), eq(g.workingDir, workingDir), eq(g.tool, tool)));
      return rows.map((row) => row.match);
    });
  }
}
