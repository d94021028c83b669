/** What a webhook can be told of (no zod here: the console bundles it on its own). */
export const WEBHOOK_EVENTS = ['approval_requested', 'run_ended'] as const;
