import type { ApprovalResponse } from '@mada/protocol';
import type { ApprovalRecord } from '../db/approval-repository.js';

export const toApprovalResponse = (a: ApprovalRecord): ApprovalResponse => ({
  id: a.id,
  run_id: a.runId,
  tool: a.tool,
  args: JSON.parse(a.args) as Record<string, unknown>,
  reason: a.reason,
  status: a.status,
  created_at: a.createdAt.toISOString(),
  expires_at: a.expiresAt.toISOString(),
  decided_at: a.decidedAt?.toISOString() ?? null,
  message: a.message,
});
