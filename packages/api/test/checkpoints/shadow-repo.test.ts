import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, realpathSync, rmSync, statSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { describeChanges } from '../../src/checkpoints/changes.js';
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

describe('what a snapshot holds', () => {
  it("keeps out skipped directories and the service's paths, even when a .gitignore asks for them back", async () => {
    mkdirSync(join(workingDir, 'node_modules', 'dep'), { recursive: true });
    mkdirSync(join(workingDir, 'data'));
    mkdirSync(join(workingDir, 'src'));
    writeFileSync(join(workingDir, 'node_modules', 'dep', 'index.js'), 'dep\n');
    writeFileSync(join(workingDir, 'data', 'mada.sqlite'), 'db\n');
    writeFileSync(join(workingDir, '.env'), 'SECRET=1\n');
    writeFileSync(join(workingDir, 'src', 'a.ts'), 'a\n');
    writeFileSync(join(workingDir, '.gitignore'), '!node_modules/\n!data/\n!.env\n');
    const excludedPaths = [join(workingDir, 'data'), join(workingDir, '.env')];
    const first = await shadow().snapshot({ maxFileBytes: 1000, excludedPaths });
    expect(Object.keys(contents(first.tree)).sort()).toEqual(['.gitignore', 'src/a.ts']);
    // Changed since: still out.
    writeFileSync(join(workingDir, 'data', 'mada.sqlite'), 'db, later\n');
    writeFileSync(join(workingDir, 'node_modules', 'dep', 'more.js'), 'more\n');
    const second = await shadow().snapshot({ maxFileBytes: 1000, excludedPaths });
    expect(Object.keys(contents(second.tree)).sort()).toEqual(['.gitignore', 'src/a.ts']);
  });

  it('drops files it holds once their directory becomes an excluded path', async () => {
    mkdirSync(join(workingDir, 'state'));
    writeFileSync(join(workingDir, 'state', 'db'), 'db\n');
    writeFileSync(join(workingDir, 'kept.txt'), 'kept\n');
    expect(Object.keys(contents((await shadow().snapshot(limits())).tree)).sort()).toEqual(['kept.txt', 'state/db']);
    const later = await shadow().snapshot({ maxFileBytes: 1000, excludedPaths: [join(workingDir, 'state')] });
    expect(contents(later.tree)).toEqual({ 'kept.txt': 'kept\n' });
  });

  it('holds the files of a nested repository, whose own config runs nothing', async () => {
    const canary = join(root, 'canary-nested');
    mkdirSync(join(workingDir, 'vendor'));
    execFileSync('git', ['init', '-q', join(workingDir, 'vendor', 'lib')]);
    execFileSync('git', ['-C', join(workingDir, 'vendor', 'lib'), 'config', 'core.fsmonitor', `touch ${canary}; echo`]);
    writeFileSync(join(workingDir, 'vendor', 'lib', 'lib.ts'), 'one\n');
    const repo = shadow();
    expect(contents((await repo.snapshot(limits())).tree)).toEqual({ 'vendor/lib/lib.ts': 'one\n' });
    writeFileSync(join(workingDir, 'vendor', 'lib', 'lib.ts'), 'two\n');
    writeFileSync(join(workingDir, 'vendor', 'lib', 'new.ts'), 'new\n');
    expect(contents((await repo.snapshot(limits())).tree)).toEqual({ 'vendor/lib/lib.ts': 'two\n', 'vendor/lib/new.ts': 'new\n' });
    expect(existsSync(canary)).toBe(false);
  });

  it("shows a run's changes in full though a .gitattributes marks the files binary", async () => {
    writeFileSync(join(workingDir, '.gitattributes'), '*.js binary\n*.ts -diff\n');
    writeFileSync(join(workingDir, 'app.js'), 'one\n');
    writeFileSync(join(workingDir, 'lib.ts'), 'one\n');
    const repo = shadow();
    const before = (await repo.snapshot(limits())).tree;
    writeFileSync(join(workingDir, 'app.js'), 'one\nfetch(stolen)\n');
    writeFileSync(join(workingDir, 'lib.ts'), 'one\nexec(payload)\n');
    const after = (await repo.snapshot(limits())).tree;
    const { files, diff } = await describeChanges(repo, before, after, []);
    expect(diff).toContain('+fetch(stolen)');
    expect(diff).toContain('+exec(payload)');
    expect(files).toEqual([
      { path: 'app.js', change: 'modified', additions: 1, deletions: 0 },
      { path: 'lib.ts', change: 'modified', additions: 1, deletions: 0 },
    ]);
  });

  it('stores files byte for byte, whatever encoding or line-ending conversion a .gitattributes asks for', async () => {
    // An encoding git cannot convert from would fail every snapshot (no undo); a conversion it
    // can do would store, and restore, other bytes than the file's.
    writeFileSync(join(workingDir, '.gitattributes'), '*.txt text eol=crlf working-tree-encoding=UTF-16\n*.bin working-tree-encoding=NO-SUCH-ENCODING\n*.md ident\n');
    const bytes = { 'odd.txt': Buffer.from([0xff, 0x0a, 0x41, 0x0d, 0x0a]), 'data.bin': Buffer.from('not utf-16\n'), 'id.md': Buffer.from('$Id$\n') };
    for (const [name, content] of Object.entries(bytes)) writeFileSync(join(workingDir, name), content);
    const { tree } = await shadow().snapshot(limits());
    const gitDir = ShadowRepo.gitDirFor(root, workingDir);
    for (const [name, content] of Object.entries(bytes)) expect(execFileSync('git', ['--git-dir', gitDir, 'cat-file', 'blob', `${tree}:${name}`])).toEqual(content);
  });

  it('sees a file rewritten to the same size with its old modification time put back', async () => {
    writeFileSync(join(workingDir, 'a.txt'), 'aaaa\n');
    const { mtime } = statSync(join(workingDir, 'a.txt'));
    const repo = shadow();
    await repo.snapshot(limits());
    await new Promise((resolve) => setTimeout(resolve, 20));
    writeFileSync(join(workingDir, 'a.txt'), 'bbbb\n');
    utimesSync(join(workingDir, 'a.txt'), mtime, mtime);
    expect(contents((await repo.snapshot(limits())).tree)).toEqual({ 'a.txt': 'bbbb\n' });
  });

  it('sees files added to a directory right after a snapshot read it', async () => {
    mkdirSync(join(workingDir, 'dir'));
    const repo = shadow();
    const expected: Record<string, string> = {};
    for (let i = 0; i < 5; i++) {
      await repo.snapshot(limits());
      writeFileSync(join(workingDir, 'dir', `f${i}.txt`), `${i}\n`);
      expected[`dir/f${i}.txt`] = `${i}\n`;
      expect(contents((await repo.snapshot(limits())).tree)).toEqual(expected);
    }
  });

  it('lets a file that became a link, or lies behind a directory that became one, leave the snapshot', async () => {
    mkdirSync(join(workingDir, 'src'));
    mkdirSync(join(workingDir, 'elsewhere'));
    writeFileSync(join(workingDir, 'src', 'a.ts'), 'a\n');
    writeFileSync(join(workingDir, 'b.ts'), 'b\n');
    writeFileSync(join(workingDir, 'elsewhere', 'a.ts'), 'other\n');
    const repo = shadow();
    await repo.snapshot(limits());
    rmSync(join(workingDir, 'src'), { recursive: true });
    symlinkSync(join(workingDir, 'elsewhere'), join(workingDir, 'src'));
    rmSync(join(workingDir, 'b.ts'));
    symlinkSync('/etc/hostname', join(workingDir, 'b.ts'));
    expect(contents((await repo.snapshot(limits())).tree)).toEqual({ 'elsewhere/a.ts': 'other\n' });
  });
});

describe('an ignore file that changes', () => {
  it('lets the files it now covers leave the snapshot, and those it frees enter it', async () => {
    mkdirSync(join(workingDir, 'out'));
    writeFileSync(join(workingDir, 'out', 'app.js'), 'built\n');
    writeFileSync(join(workingDir, 'debug.log'), 'log\n');
    writeFileSync(join(workingDir, 'main.ts'), 'main\n');
    writeFileSync(join(workingDir, '.gitignore'), '*.log\n');
    const repo = shadow();
    expect(Object.keys(contents((await repo.snapshot(limits())).tree)).sort()).toEqual(['.gitignore', 'main.ts', 'out/app.js']);
    writeFileSync(join(workingDir, '.gitignore'), 'out/\n');
    expect(Object.keys(contents((await repo.snapshot(limits())).tree)).sort()).toEqual(['.gitignore', 'debug.log', 'main.ts']);
  });
});

describe('a working directory inside a repository', () => {
  it('follows the .gitignore rules of the directories above it, up to the repository', async () => {
    // workingDir is the repository; the snapshot is of its subdirectory app/.
    mkdirSync(join(workingDir, '.git'));
    writeFileSync(join(workingDir, '.gitignore'), '*.log\n/app/gen/\n/other/\n!keep.log\n');
    const app = join(workingDir, 'app');
    mkdirSync(join(app, 'gen'), { recursive: true });
    mkdirSync(join(app, 'other'));
    writeFileSync(join(app, 'main.ts'), 'main\n');
    writeFileSync(join(app, 'debug.log'), 'log\n');
    writeFileSync(join(app, 'keep.log'), 'kept\n');
    writeFileSync(join(app, 'gen', 'out.ts'), 'generated\n');
    writeFileSync(join(app, 'other', 'x.ts'), 'x\n');
    const repo = new ShadowRepo({ gitDir: ShadowRepo.gitDirFor(root, app), workTree: app });
    const { tree } = await repo.snapshot(limits());
    const gitDir = ShadowRepo.gitDirFor(root, app);
    const paths = execFileSync('git', ['--git-dir', gitDir, 'ls-tree', '-r', '--name-only', tree], { encoding: 'utf8' }).trim().split('\n');
    expect(paths.sort()).toEqual(['keep.log', 'main.ts', 'other/x.ts']);
  });
});

describe('a service killed while git held the index lock', () => {
  it('leaves a lock that later snapshots remove once it is older than any git it runs', async () => {
    writeFileSync(join(workingDir, 'a.txt'), 'one\n');
    writeFileSync(join(workingDir, 'b.txt'), 'b\n');
    const repo = shadow();
    await repo.snapshot(limits());
    const lock = join(ShadowRepo.gitDirFor(root, workingDir), 'index.lock');
    writeFileSync(lock, '');
    const hourAgo = new Date(Date.now() - 3600_000);
    utimesSync(lock, hourAgo, hourAgo);
    writeFileSync(join(workingDir, 'a.txt'), 'two\n');
    // A file gone: the index must be updated.
    rmSync(join(workingDir, 'b.txt'));
    expect(contents((await repo.snapshot(limits())).tree)).toEqual({ 'a.txt': 'two\n' });
  });
});

describe('a snapshot of a few changed files, made without updating the index', () => {
  /** The tree git writes for the working directory as it is now, in a shadow repository of its own. */
  async function treeGitWrites(): Promise<string> {
    const elsewhere = mkdtempSync(join(tmpdir(), 'mada-shadow-root-'));
    try {
      return (await new ShadowRepo({ gitDir: ShadowRepo.gitDirFor(elsewhere, workingDir), workTree: workingDir }).snapshot(limits())).tree;
    } finally {
      rmSync(elsewhere, { recursive: true, force: true });
    }
  }

  const indexed = (): string[] =>
    execFileSync('git', ['--git-dir', ShadowRepo.gitDirFor(root, workingDir), 'ls-files', '-z'], { encoding: 'latin1' }).split('\0').filter(Boolean);

  /** A snapshot as the checkpoint service takes it: HEAD follows it. */
  async function snapshot(repo: ShadowRepo): Promise<string> {
    const taken = await repo.snapshot(limits());
    if (taken.head) repo.record([['HEAD', taken.head]]);
    return taken.tree;
  }

  const blob = (tree: string, path: string): string =>
    execFileSync('git', ['--git-dir', ShadowRepo.gitDirFor(root, workingDir), 'cat-file', 'blob', `${tree}:${path}`], { encoding: 'utf8' });

  beforeEach(() => {
    mkdirSync(join(workingDir, 'src', 'b'), { recursive: true });
    writeFileSync(join(workingDir, 'src', 'a.ts'), 'a\n');
    writeFileSync(join(workingDir, 'src', 'b', 'c.ts'), 'c\n');
    writeFileSync(join(workingDir, 'tool.sh'), 'echo\n');
  });

  it.each([
    ['a few files', 3],
    ['more files than go on top of the last tree', 70],
  ])('is the tree git itself writes, for %s', async (_, added) => {
    const repo = shadow();
    await snapshot(repo);
    writeFileSync(join(workingDir, 'src', 'a.ts'), 'a, changed\n');
    chmodSync(join(workingDir, 'tool.sh'), 0o755);
    // Names that sort around the directory src/b (git orders it as `b/`), one not UTF-8.
    for (const name of ['b.ts', 'b-c', 'b0', 'b']) writeFileSync(join(workingDir, 'src', name === 'b' ? 'b/new.ts' : name), `${name}\n`);
    writeFileSync(Buffer.from(`${workingDir}/caf\xe9.txt`, 'latin1'), 'latin1\n');
    for (let i = 0; i < added; i++) writeFileSync(join(workingDir, `new${i}.txt`), `${i}\n`);
    mkdirSync(join(workingDir, 'deep', 'er'), { recursive: true });
    writeFileSync(join(workingDir, 'deep', 'er', 'x.txt'), 'x\n');
    const tree = await snapshot(repo);
    expect(tree).toBe(await treeGitWrites());
    expect(blob(tree, 'src/a.ts')).toBe('a, changed\n');
    expect(indexed().includes('deep/er/x.txt')).toBe(added > 64);
  });

  it('sees every later change to those files: back as the index holds them, removed, changed again', async () => {
    const repo = shadow();
    await snapshot(repo);
    writeFileSync(join(workingDir, 'src', 'a.ts'), 'A\n');
    writeFileSync(join(workingDir, 'src', 'new.ts'), 'new\n');
    expect(contents(await snapshot(repo))).toMatchObject({ 'src/a.ts': 'A\n', 'src/new.ts': 'new\n' });
    expect(indexed()).not.toContain('src/new.ts');
    // Same size, same second, content as the index holds it.
    writeFileSync(join(workingDir, 'src', 'a.ts'), 'a\n');
    rmSync(join(workingDir, 'src', 'new.ts'));
    expect(contents(await snapshot(repo))).toEqual({ 'src/a.ts': 'a\n', 'src/b/c.ts': 'c\n', 'tool.sh': 'echo\n' });
    writeFileSync(join(workingDir, 'src', 'a.ts'), 'b\n');
    expect(contents(await snapshot(repo))['src/a.ts']).toBe('b\n');
  });

  it('lets git write the tree when the last one was packed by garbage collection', async () => {
    const repo = shadow();
    await snapshot(repo);
    await repo.git(['gc', '--quiet', '--prune=now']);
    writeFileSync(join(workingDir, 'src', 'b', 'c.ts'), 'c, changed\n');
    const tree = await snapshot(repo);
    expect(blob(tree, 'src/b/c.ts')).toBe('c, changed\n');
    expect(tree).toBe(await treeGitWrites());
    // git wrote this one, and the index follows it: the next change goes on top again.
    writeFileSync(join(workingDir, 'src', 'b', 'd.ts'), 'd\n');
    expect(contents(await snapshot(repo))).toMatchObject({ 'src/b/c.ts': 'c, changed\n', 'src/b/d.ts': 'd\n' });
    expect(indexed()).toEqual(['src/a.ts', 'src/b/c.ts', 'tool.sh']);
  });

  it('lets a file put on top that became a link leave the snapshot', async () => {
    const repo = shadow();
    await snapshot(repo);
    writeFileSync(join(workingDir, 'secret-free.txt'), 'mine\n');
    expect(contents(await snapshot(repo))['secret-free.txt']).toBe('mine\n');
    rmSync(join(workingDir, 'secret-free.txt'));
    symlinkSync('/etc/hostname', join(workingDir, 'secret-free.txt'));
    expect(Object.keys(contents(await snapshot(repo))).sort()).toEqual(['src/a.ts', 'src/b/c.ts', 'tool.sh']);
  });
});
