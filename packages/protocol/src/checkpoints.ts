import { z } from 'zod';

/** One file a run changed, relative to its working directory; a mode change alone counts as `modified`. */
export const ChangedFile = z
  .object({
    path: z.string(),
    change: z.enum(['added', 'modified', 'deleted']),
    additions: z.number().int(),
    deletions: z.number().int(),
  })
  .meta({ id: 'ChangedFile' });
export type ChangedFile = z.infer<typeof ChangedFile>;

/** GET /runs/{id}/changes: the files a run changed and the unified diff (cut at 1 MiB with a note). */
export const RunChangesResponse = z.object({ files: z.array(ChangedFile), diff: z.string() }).meta({ id: 'RunChangesResponse' });
export type RunChangesResponse = z.infer<typeof RunChangesResponse>;

/** POST /runs/{id}/revert: `force` reverts files changed after the run too. */
export const RevertRequest = z.object({ force: z.boolean().default(false) }).meta({ id: 'RevertRequest' });
export type RevertRequest = z.infer<typeof RevertRequest>;
export type RevertInput = z.input<typeof RevertRequest>;

export const RevertResponse = z.object({ reverted: z.array(z.string()) }).meta({ id: 'RevertResponse' });
export type RevertResponse = z.infer<typeof RevertResponse>;
