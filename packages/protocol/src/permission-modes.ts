/** The permission modes a run or a turn can take (no zod here: the console bundles it on its own). */
export const PERMISSION_MODES = ['default', 'plan', 'auto_accept'] as const;
