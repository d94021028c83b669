import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ShadowRepo } from '../../src/checkpoints/shadow-repo.js';
import { DEFAULT_IGNORED_DIRS } from '../../src/tools/search/backend.js';

let base: string;
let workingDir: string;
let root: string;
beforeEach(() => {
  base = realpathSync(mkdtempSync(join(tmpdir(), 'mada-search-ignores-')));
  workingDir = join(base, 'wd');
  mkdirSync(workingDir);
  root = mkdtempSync(join(tmpdir(), 'mada-search-ignores-root-'));
});
afterEach(() => {
  rmSync(base, { recursive: true, force: true });
  rmSync(root, { recursive: true, force: true });
});

const shadow = (): ShadowRepo => new ShadowRepo({ gitDir: ShadowRepo.gitDirFor(root, workingDir), workTree: workingDir });
const limits = { maxFileBytes: 100_000, excludedPaths: [] };

function write(files: Record<string, string>): void {
  for (const [path, content] of Object.entries(files)) {
    mkdirSync(dirname(join(workingDir, path)), { recursive: true });
    writeFileSync(join(workingDir, path), content);
  }
}

async function snapshotPaths(repo: ShadowRepo): Promise<string[]> {
  const { tree } = await repo.snapshot(limits);
  const gitDir = ShadowRepo.gitDirFor(root, workingDir);
  const listing = execFileSync('git', ['--git-dir', gitDir, 'ls-tree', '-r', '-z', '--name-only', tree], { encoding: 'utf8' });
  return listing.split('\0').filter(Boolean).sort();
}

/** What ripgrep lists, with the flags glob_files runs it with. */
function ripgrepPaths(): string[] {
  const flags = ['--no-config', '--no-messages', '--hidden', '--no-require-git', '--no-ignore-global', '--no-ignore-exclude'];
  const args = [...flags, ...DEFAULT_IGNORED_DIRS.flatMap((name) => ['--glob', `!${name}/`]), '--files', '--null'];
  return execFileSync('rg', args, { cwd: workingDir, encoding: 'utf8' }).split('\0').filter(Boolean).sort();
}

const NESTED_TREE: Record<string, string> = {
  '.gitignore': '*.log\nbuild/\n',
  'app.ts': 'app\n',
  'debug.log': 'log\n',
  'keep.log': 'kept by .ignore\n',
  // A `.ignore` re-includes what `.gitignore` excludes: ripgrep ranks it higher.
  '.ignore': '!keep.log\n!build/\nbuild/tmp/\nsecret.txt\n',
  'build/out.js': 'out\n',
  'build/tmp/cache.bin': 'cache\n',
  'secret.txt': 'hidden from search\n',
  'src/main.ts': 'main\n',
  'src/.rgignore': 'generated/\n*.snap\n!keep.snap\n',
  'src/generated/types.ts': 'types\n',
  'src/a.snap': 'snap\n',
  'src/keep.snap': 'snap kept\n',
  // A deeper `.gitignore` re-includes what a `.ignore` excludes: the `.ignore` still wins.
  'docs/.gitignore': '!secret.txt\n',
  'docs/secret.txt': 'still hidden\n',
  'docs/guide.md': 'guide\n',
  'deep/er/.ignore': '*.tmp\n/only-here.txt\n',
  'deep/er/x.tmp': 'tmp\n',
  'deep/er/sub/y.tmp': 'tmp\n',
  'deep/er/only-here.txt': 'anchored\n',
  'deep/er/sub/only-here.txt': 'not anchored here\n',
  'deep/z.tmp': 'outside the .ignore\n',
};

describe('snapshots and .ignore / .rgignore files', () => {
  it('hold exactly the files ripgrep lists on a tree with such files in nested directories', async () => {
    write(NESTED_TREE);
    const expected = ripgrepPaths();
    // The tree does exercise each kind of rule.
    expect(expected).toContain('keep.log');
    expect(expected).toContain('build/out.js');
    expect(expected).toContain('src/keep.snap');
    expect(expected).not.toContain('docs/secret.txt');
    expect(expected).not.toContain('deep/er/sub/y.tmp');
    expect(expected).toContain('deep/er/sub/only-here.txt');
    expect(await snapshotPaths(shadow())).toEqual(expected);
  });

  it('follow a change to a .ignore file between two snapshots, both ways', async () => {
    write(NESTED_TREE);
    const repo = shadow();
    expect(await snapshotPaths(repo)).toEqual(ripgrepPaths());
    write({ 'deep/er/.ignore': '/only-here.txt\n', 'src/.rgignore': '*.snap\n', '.ignore': '!keep.log\napp.ts\n' });
    const second = ripgrepPaths();
    expect(second).toContain('deep/er/x.tmp');
    expect(second).toContain('src/generated/types.ts');
    expect(second).not.toContain('app.ts');
    expect(second).not.toContain('build/out.js');
    expect(await snapshotPaths(repo)).toEqual(second);
    rmSync(join(workingDir, '.ignore'));
    expect(await snapshotPaths(repo)).toEqual(ripgrepPaths());
  });

  it('take up a .ignore file added after the first snapshot, and one in a new directory', async () => {
    write({ 'a.txt': 'a\n', 'b/c.txt': 'c\n', '.gitignore': 'ignored/\n', 'ignored/x.txt': 'x\n' });
    const repo = shadow();
    expect(await snapshotPaths(repo)).toEqual(ripgrepPaths());
    write({ '.ignore': 'a.txt\n!ignored/\n', 'new/.rgignore': '*.txt\n', 'new/d.txt': 'd\n', 'new/e.md': 'e\n' });
    const expected = ripgrepPaths();
    expect(expected).toEqual(['.gitignore', '.ignore', 'b/c.txt', 'ignored/x.txt', 'new/.rgignore', 'new/e.md']);
    expect(await snapshotPaths(repo)).toEqual(expected);
    // Nothing changed: the same listing again.
    expect(await snapshotPaths(repo)).toEqual(expected);
  });

  it('meet a .ignore file inside a directory that only a .ignore rule re-includes', async () => {
    write({
      '.gitignore': 'vendor/\n',
      '.ignore': '!vendor/\n',
      'vendor/lib.js': 'lib\n',
      'vendor/.ignore': '*.min.js\n',
      'vendor/lib.min.js': 'min\n',
      'vendor/inner/.rgignore': '*.js\n!keep.js\n',
      'vendor/inner/a.js': 'a\n',
      'vendor/inner/keep.js': 'keep\n',
    });
    const expected = ripgrepPaths();
    expect(expected).toEqual(['.gitignore', '.ignore', 'vendor/.ignore', 'vendor/inner/.rgignore', 'vendor/inner/keep.js', 'vendor/lib.js']);
    const repo = shadow();
    expect(await snapshotPaths(repo)).toEqual(expected);
    write({ 'vendor/.ignore': 'lib.js\n' });
    const second = ripgrepPaths();
    expect(second).toContain('vendor/lib.min.js');
    expect(await snapshotPaths(repo)).toEqual(second);
  });

  it('find the .ignore files a shadow repository made before they counted already holds', async () => {
    write({ '.ignore': 'a.txt\n', 'a.txt': 'a\n', 'b.txt': 'b\n', 'sub/.rgignore': 'c.txt\n', 'sub/c.txt': 'c\n' });
    const repo = shadow();
    expect(await snapshotPaths(repo)).toEqual(ripgrepPaths());
    // What such a repository looks like: the files in its index, their rules nowhere.
    const gitDir = ShadowRepo.gitDirFor(root, workingDir);
    rmSync(join(gitDir, 'mada-search-ignores'));
    writeFileSync(join(gitDir, 'info', 'exclude'), '');
    expect(await snapshotPaths(shadow())).toEqual(['.ignore', 'b.txt', 'sub/.rgignore']);
  });

  it('follow the .ignore files of the directories above the working directory', async () => {
    writeFileSync(join(base, '.ignore'), 'wd/skipped/\n*.bak\n');
    write({ 'skipped/a.ts': 'a\n', 'kept.ts': 'k\n', 'old.bak': 'b\n', 'sub/new.bak': 'b\n' });
    const expected = ripgrepPaths();
    expect(expected).toEqual(['kept.ts']);
    expect(await snapshotPaths(shadow())).toEqual(expected);
  });

  it('pass over ignore files that are FIFOs, above the working directory and in it, without waiting', async () => {
    // A read of a FIFO waits for a writer: synchronously it would stop the service's event loop.
    execFileSync('mkfifo', [join(base, '.gitignore'), join(base, '.ignore')]);
    write({ 'kept.ts': 'k\n', 'sub/a.ts': 'a\n' });
    execFileSync('mkfifo', [join(workingDir, 'sub', '.ignore'), join(workingDir, '.rgignore')]);
    const paths = await snapshotPaths(shadow());
    expect(paths).toContain('kept.ts');
    expect(paths).toContain('sub/a.ts');
  });

  it("let a snapshot past a .gitignore or .gitattributes FIFO that git itself would wait on", { timeout: 60_000 }, async () => {
    // git opens them without looking: the snapshot waited for its 5-minute timeout and failed.
    write({ 'kept.ts': 'k\n', 'sub/a.ts': 'a\n', 'deep/er/b.ts': 'b\n' });
    execFileSync('mkfifo', [join(workingDir, '.gitignore'), join(workingDir, 'sub', '.gitattributes'), join(workingDir, 'deep', 'er', '.gitignore')]);
    const repo = shadow();
    expect(await snapshotPaths(repo)).toEqual(expect.arrayContaining(['kept.ts', 'sub/a.ts', 'deep/er/b.ts']));
    writeFileSync(join(workingDir, 'sub', 'a.ts'), 'changed\n');
    expect(await snapshotPaths(repo)).toEqual(expect.arrayContaining(['kept.ts', 'sub/a.ts', 'deep/er/b.ts']));
  });
});
