import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ProtectedSnapshot } from '../../../src/tools/sandbox/protected-snapshot.js';
import { putBack } from '../../../src/tools/sandbox/put-back.js';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** A protected file the command then rewrote. */
function rewrittenProtectedFile(): { snapshot: ProtectedSnapshot; file: string } {
  const dir = mkdtempSync(join(tmpdir(), 'mada-put-back-'));
  dirs.push(dir);
  const file = join(dir, 'config');
  writeFileSync(file, 'before\n');
  const snapshot = ProtectedSnapshot.take([file]);
  writeFileSync(file, '[core]\n\tfsmonitor = planted\n');
  return { snapshot, file };
}

describe('putting back what a bash command may not change', () => {
  it('runs every guard even when the repository census fails, then reports the failure', async () => {
    const { snapshot, file } = rewrittenProtectedFile();
    let gitlinksChecked = false;
    const failingCensus = { check: () => Promise.reject(new Error('the walk met a directory it could not read')) };
    const gitlinks = {
      check: () => {
        gitlinksChecked = true;
        return Promise.resolve({ removed: ['vendor/planted'], unreadable: [], headMoved: [] });
      },
    };
    await expect(putBack(snapshot, [file], failingCensus, gitlinks)).rejects.toThrow('the walk met a directory it could not read');
    // The guards before and after the failing one still did their work.
    expect(readFileSync(file, 'utf8')).toBe('before\n');
    expect(gitlinksChecked).toBe(true);
  });

  it('gathers what each guard put back when none fails', async () => {
    const { snapshot, file } = rewrittenProtectedFile();
    const census = { check: () => Promise.resolve({ restored: ['r2/.git/hooks/pre-commit'], removed: ['r3/.git'], overCap: false, maxDirectories: 10 }) };
    const result = await putBack(snapshot, [file], census, undefined);
    expect(result.restored).toEqual([file, 'r2/.git/hooks/pre-commit']);
    expect(result.census.removed).toEqual(['r3/.git']);
    expect(result.gitlinkReport.removed).toEqual([]);
  });
});
