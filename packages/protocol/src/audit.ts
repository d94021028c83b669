import { z } from 'zod';
import { AUDIT_ACTIONS } from './audit-actions.js';

/* The audit log (`/audit*`, TEAMS.md section 10): the wire shapes. */

export const AuditAction = z
  .enum(AUDIT_ACTIONS)
  .meta({ id: 'AuditAction' });
export type AuditAction = z.infer<typeof AuditAction>;
export { AUDIT_ACTIONS };

const Seq = z.number().int().min(1);

export const AuditEntry = z
  .object({
    seq: Seq,
    at: z.string().meta({ description: 'UTC ISO 8601 with milliseconds and Z' }),
    actor: z.string().meta({ description: 'A user id, or `system` for what the service does by itself' }),
    action: z.string().meta({ description: 'One of AuditAction' }),
    target: z.string().nullable().meta({ description: 'What was acted on: `user:<id>`, `key:<id>`, `run:<id>`' }),
    detail: z.unknown().meta({ description: 'What was decided; never prompts, file contents or keys' }),
    hash: z.string().meta({
      description: 'hex SHA-256 of the previous entry\'s hash (64 zeros before the first) followed by this entry without `hash` as RFC 8785 canonical JSON',
    }),
  })
  .meta({ id: 'AuditEntry' });
export type AuditEntry = z.infer<typeof AuditEntry>;

export const AuditQuery = z.object({
  after: z.coerce.number().int().min(0).max(Number.MAX_SAFE_INTEGER).default(0).meta({ description: 'Entries with a seq above this one (next_after of the previous page)' }),
  limit: z.coerce.number().int().min(1).max(1000).default(100),
  actor: z.string().min(1).max(64).optional(),
  action: AuditAction.optional(),
});
export type AuditQuery = z.infer<typeof AuditQuery>;

export const AuditListResponse = z
  .object({
    entries: z.array(AuditEntry),
    next_after: Seq.nullable().meta({ description: 'Pass as `after` for the next page; null when this page is the last' }),
  })
  .meta({ id: 'AuditListResponse' });
export type AuditListResponse = z.infer<typeof AuditListResponse>;

export const AuditVerifyResponse = z
  .object({
    ok: z.boolean(),
    entries: z.number().int().min(0).meta({ description: 'How many entries were read' }),
    first_bad_seq: Seq.nullable().meta({ description: 'The first entry changed or removed; null when ok' }),
  })
  .meta({ id: 'AuditVerifyResponse' });
export type AuditVerifyResponse = z.infer<typeof AuditVerifyResponse>;
