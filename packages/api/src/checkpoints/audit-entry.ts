import type { NewAuditEntry } from '../db/audit-repository.js';
import type { RunHead } from '../db/run-repository.js';

/** Paths an entry names at most; the count says how many there were. */
const MAX_PATHS = 200;

/** `checkpoint.reverted`: the paths a revert put back (names only, never their contents). */
export const revertedEntry = (run: RunHead, paths: readonly string[], at: Date): NewAuditEntry => ({
  at,
  actor: run.userId,
  action: 'checkpoint.reverted',
  target: `run:${run.id}`,
  detail: { working_dir: run.workingDir, count: paths.length, paths: paths.slice(0, MAX_PATHS) },
});
