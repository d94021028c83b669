import { z } from 'zod';

/* Approvals (`/approvals*`, EXTENSIONS.md section 3): the wire shapes. */

export const ApprovalStatus = z.enum(['pending', 'approved', 'denied']).meta({ id: 'ApprovalStatus' });
export type ApprovalStatus = z.infer<typeof ApprovalStatus>;

const Timestamp = z.string().meta({ description: 'UTC ISO 8601 with milliseconds and Z' });

export const ApprovalResponse = z
  .object({
    id: z.uuid(),
    run_id: z.uuid(),
    tool: z.string(),
    args: z.record(z.string(), z.unknown()),
    reason: z.string(),
    status: ApprovalStatus,
    created_at: Timestamp,
    expires_at: Timestamp,
    decided_at: Timestamp.nullable(),
    message: z.string().nullable(),
  })
  .meta({ id: 'ApprovalResponse' });
export type ApprovalResponse = z.infer<typeof ApprovalResponse>;

export const ListApprovalsQuery = z.object({ status: ApprovalStatus.optional() });

export const ApprovalListResponse = z
  .object({ approvals: z.array(ApprovalResponse), total: z.number().int() })
  .meta({ id: 'ApprovalListResponse' });
export type ApprovalListResponse = z.infer<typeof ApprovalListResponse>;

export const ApprovalDecision = z.enum(['approve', 'deny', 'approve_always']).meta({ id: 'ApprovalDecision' });
export type ApprovalDecision = z.infer<typeof ApprovalDecision>;

export const DecideApprovalRequest = z
  .object({ decision: ApprovalDecision, message: z.string().max(2000).optional().meta({ examples: ['Fine, go ahead.'] }) })
  .meta({ id: 'DecideApprovalRequest' });
export type DecideApprovalRequest = z.infer<typeof DecideApprovalRequest>;

export const ApprovalParams = z.object({ approval_id: z.string() });
