/** Every state a run can be in (no zod here: the console bundles it on its own). */
export const RUN_STATUSES = ['queued', 'running', 'waiting_approval', 'succeeded', 'failed', 'cancelled', 'interrupted'] as const;
