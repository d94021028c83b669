import type { NewAuditEntry } from './audit-repository.js';
/** Stored approvals and approve_always grants (EXTENSIONS.md section 3), for both dialects. */

export type ApprovalStatus = 'pending' | 'approved' | 'denied';

export interface ApprovalRecord {
  id: string;
  runId: string;
  userId: string;
  tool: string;
  /** The call's arguments as JSON text. */
  args: string;
  reason: string;
  status: ApprovalStatus;
  workingDir: string;
  /** JSON list of the rule matches an approve_always grant covers. */
  grantMatch: string;
  createdAt: Date;
  expiresAt: Date;
  decidedAt: Date | null;
  message: string | null;
}

export type NewApproval = Omit<ApprovalRecord, 'status' | 'decidedAt' | 'message'>;

export interface ApprovalGrant {
  userId: string;
  workingDir: string;
  tool: string;
  match: string;
}

export interface ApprovalRepository {
  /**
   * Stores a pending approval and marks its run `waiting_approval` (if it is running) in one
   * transaction: nobody sees the approval while its run still says `running`. The user's webhooks
   * subscribed to `approval_requested` get their deliveries in the same transaction.
   */
  createApproval(input: NewApproval): Promise<ApprovalRecord>;
  findApproval(id: string): Promise<ApprovalRecord | undefined>;
  /** The user's approvals, newest first, optionally of one status, with the total that matches. */
  listApprovals(userId: string, status: ApprovalStatus | null): Promise<{ items: ApprovalRecord[]; total: number }>;
  /**
   * Decides a pending approval, once: undefined when it was no longer pending (or is gone). `audit`
   * makes the entry recording the decision, committed with it.
   */
  decideApproval(
    id: string,
    decision: { status: 'approved' | 'denied'; message: string | null; now: Date },
    audit?: (decided: ApprovalRecord) => NewAuditEntry,
  ): Promise<ApprovalRecord | undefined>;
  /** Denies every pending approval of a run (it ended); returns their ids. */
  denyPendingOfRun(runId: string, message: string, now: Date): Promise<string[]>;
  /** Stores an approve_always grant; `audit`, when the grant is new, is committed with it. */
  addGrant(grant: ApprovalGrant, now: Date, audit?: NewAuditEntry): Promise<void>;
  /** The matches this user has granted for this tool in this working directory. */
  grantedMatches(userId: string, workingDir: string, tool: string): Promise<string[]>;
}
