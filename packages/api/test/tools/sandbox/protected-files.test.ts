import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, realpathSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { repositoriesAround } from '../../../src/tools/sandbox/protected-files.js';

/*
 * Which repositories are around a command (their config and hooks are protected, their indexes
 * watched) is read from `.git` files and `commondir`s the command may have written.
 */

let base: string;
beforeEach(() => {
  base = realpathSync(mkdtempSync(join(tmpdir(), 'mada-protected-files-')));
});
afterEach(() => rmSync(base, { recursive: true, force: true }));

describe('repositories around a command', () => {
  it('reads a gitdir: file padded to 3 GB (sparse) by its first bytes only, not all of it into memory', () => {
    execFileSync('git', ['init', '-q', join(base, 'real')]);
    const tree = join(base, 'tree');
    mkdirSync(tree);
    writeFileSync(join(tree, '.git'), 'gitdir: ../real/.git\n');
    truncateSync(join(tree, '.git'), 3 * 1024 ** 3);
    expect(repositoriesAround(tree, [base])).toEqual([{ tree, gitDir: join(base, 'real', '.git') }]);
  });
});
