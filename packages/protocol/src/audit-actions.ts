/** What the audit log records (no zod here: the console bundles it on its own). */
export const AUDIT_ACTIONS = [
  'user.created',
  'user.updated',
  'key.created',
  'key.revoked',
  'run.created',
  'run.cancelled',
  'approval.decided',
  'approval.expired',
  'rule.added',
  'checkpoint.reverted',
  'webhook.created',
  'webhook.deleted',
  'auth.locked',
  'service.started',
  'service.stopped',
] as const;
