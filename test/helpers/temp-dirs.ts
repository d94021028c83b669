import { chmodSync, lstatSync, mkdtempSync, readdirSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * Temporary directories a test file makes, removed after its last hook (worker-setup.ts): one
 * place that cleans up, instead of an afterAll in every file that a failing set-up skips.
 */
const made: string[] = [];

/** A fresh directory in the temp directory (its real path), removed when the test file ends. */
export function tempDir(prefix: string): string {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), prefix)));
  made.push(dir);
  return dir;
}

/** Gives the owner back every directory below `path` that a test locked (mode 000), so it can be removed. */
function unlock(path: string): void {
  try {
    if (!lstatSync(path).isDirectory()) return;
    chmodSync(path, 0o700);
    for (const name of readdirSync(path)) unlock(join(path, name));
  } catch {
    // Not ours (another account's) or gone: the removal below says what is left.
  }
}

/** Removes every directory tempDir made so far; what cannot be removed is left for the suite's report. */
export function removeTempDirs(): void {
  for (const dir of made.splice(0)) {
    try {
      rmSync(dir, { recursive: true, force: true, maxRetries: 3 });
    } catch {
      unlock(dir);
      rmSync(dir, { recursive: true, force: true, maxRetries: 3 });
    }
  }
}
