import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ShadowRepo } from '../../src/checkpoints/shadow-repo.js';

let workingDir: string;
let root: string;
beforeEach(() => {
  workingDir = realpathSync(mkdtempSync(join(tmpdir(), 'mada-shadow-wd-')));
  root = mkdtempSync(join(tmpdir(), 'mada-shadow-root-'));
});
afterEach(() => {
  rmSync(workingDir, { recursive: true, force: true });
  rmSync(root, { recursive: true, force: true });
});

const shadow = (): ShadowRepo => new ShadowRepo({ gitDir: ShadowRepo.gitDirFor(root, workingDir), workTree: workingDir });
const limits = (maxFileBytes = 1000) => ({ maxFileBytes, excludedPaths: [] });

/** path -> content of every file in a snapshot's tree. */
function contents(tree: string): Record<string, string> {
  const gitDir = ShadowRepo.gitDirFor(root, workingDir);
  const git = (...args: string[]) => execFileSync('git', ['--git-dir', gitDir, ...args], { encoding: 'utf8' });
  const paths = git('ls-tree', '-r', '-z', '--name-only', tree).split('\0').filter(Boolean);
  return Object.fromEntries(paths.map((path) => [path, git('cat-file', 'blob', `${tree}:${path}`)]));
}

describe('a snapshot of a working directory', () => {
  it('holds exactly the files present, after files were added, changed and deleted since the last one', async () => {
    mkdirSync(join(workingDir, 'src'));
    writeFileSync(join(workingDir, 'src', 'kept.ts'), 'kept\n');
    writeFileSync(join(workingDir, 'src', 'changed.ts'), 'one\n');
    writeFileSync(join(workingDir, 'deleted.ts'), 'gone soon\n');
    const repo = shadow();
    await repo.snapshot(limits());
    // Same size, same second: only the content tells the change apart.
    writeFileSync(join(workingDir, 'src', 'changed.ts'), 'two\n');
    rmSync(join(workingDir, 'deleted.ts'));
    writeFileSync(join(workingDir, 'added.ts'), 'new\n');
    const { tree } = await repo.snapshot(limits());
    expect(contents(tree)).toEqual({ 'src/kept.ts': 'kept\n', 'src/changed.ts': 'two\n', 'added.ts': 'new\n' });
  });

  it('leaves out a file that grew past the size limit, and lists it', async () => {
    writeFileSync(join(workingDir, 'log.txt'), 'small\n');
    const repo = shadow();
    expect(contents((await repo.snapshot(limits())).tree)).toEqual({ 'log.txt': 'small\n' });
    writeFileSync(join(workingDir, 'log.txt'), 'x'.repeat(2000));
    const second = await repo.snapshot(limits());
    expect(contents(second.tree)).toEqual({});
    expect(second.skipped).toEqual(['log.txt']);
    // Still over the limit and unchanged: still listed.
    expect((await repo.snapshot(limits())).skipped).toEqual(['log.txt']);
  });

  it('applies a lower size limit to files it already holds', async () => {
    writeFileSync(join(workingDir, 'data.json'), 'y'.repeat(500));
    expect(Object.keys(contents((await shadow().snapshot(limits(1000))).tree))).toEqual(['data.json']);
    // A restart with a lower CHECKPOINT_MAX_FILE_BYTES, nothing changed on disk.
    const after = await shadow().snapshot(limits(100));
    expect(contents(after.tree)).toEqual({});
    expect(after.skipped).toEqual(['data.json']);
  });
});
