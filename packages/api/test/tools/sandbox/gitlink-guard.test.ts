import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { bashTool } from '../../../src/tools/bash.js';
import { gitlinksOf, parseIndex, serializeIndex } from '../../../src/tools/sandbox/git-index.js';
import { GitlinkGuard } from '../../../src/tools/sandbox/gitlink-guard.js';
import { v4IndexScript } from './red-team/parser-attacks.js';
import { createProject, git, toolContext, type Project } from './support/project.js';

/*
 * The gitlink guard (gitlink-guard.ts) and the index reader under it, against indexes git itself
 * wrote: what the service reads and rewrites must be what git reads.
 */

let project: Project;

beforeEach(() => {
  project = createProject();
});

afterEach(() => project.cleanup());

const bash = (command: string) => bashTool.execute(bashTool.parameters.parse({ command }), toolContext(project));
const indexPath = (): string => join(project.root, '.git', 'index');
const stagedModes = (): string[] => git(project.root, 'ls-files', '-s').trim().split('\n').map((line) => `${line.split(' ')[0]} ${line.split('\t')[1]}`);

/** A nested repository with one commit, as `git add` needs to make a gitlink of it. */
function nestedRepository(path: string): void {
  git(project.root, 'init', '-q', path);
  git(join(project.root, path), '-c', 'user.name=a', '-c', 'user.email=a@b', 'commit', '-q', '--allow-empty', '-m', 'e');
}

describe('git index reader', () => {
  it.each([2, 3, 4])('reads and rewrites a version %i index as git does', (version) => {
    nestedRepository('vendor/lib');
    git(project.root, '-c', 'advice.addEmbeddedRepo=false', 'add', 'vendor/lib');
    // Version 3 needs an entry with extended flags (intent-to-add).
    writeFileSync(join(project.root, 'later.txt'), 'later\n');
    if (version === 3) git(project.root, 'add', '-N', 'later.txt');
    git(project.root, 'update-index', `--index-version=${version}`);
    const index = parseIndex(readFileSync(indexPath()), 20);
    expect(index).toBeDefined();
    if (index === undefined) return;
    expect(readFileSync(indexPath()).readUInt32BE(4)).toBe(version);
    expect(gitlinksOf(index)).toEqual(['vendor/lib']);
    const before = stagedModes();
    writeFileSync(indexPath(), serializeIndex(index, new Set(['vendor/lib'])));
    // git checks the trailing checksum: a wrong one is "index file corrupt".
    expect(stagedModes()).toEqual(before.filter((entry) => !entry.endsWith(' vendor/lib')));
    git(project.root, 'status', '--porcelain');
  });

  it('reads a version 4 index whose names share a prefix in linear time: past its budget, one it cannot judge', () => {
    // 7,000 entries, each name the previous one and 1,000 bytes more: 24 GB of names, rebuilt one
    // by one, ran the heap out; each rebuilt from the last costs what it adds.
    execFileSync('python3', ['-c', v4IndexScript(7000)], { cwd: project.root });
    const started = performance.now();
    expect(parseIndex(readFileSync(indexPath()), 20)).toBeUndefined();
    expect(performance.now() - started).toBeLessThan(5000);
  });

  it('does not judge a split index (its entries live in another file)', () => {
    git(project.root, 'update-index', '--split-index');
    expect(parseIndex(readFileSync(indexPath()), 20)).toBeUndefined();
  });
});

describe('bash: gitlinks added to the index', () => {
  it('takes an unregistered nested repository out of the index again, and says so', async () => {
    nestedRepository('vendor/lib');
    const result = await bash('git add vendor/lib');
    expect(result.error).toContain('removed from it again');
    expect(result.metadata?.removed_gitlinks).toEqual([join(project.root, 'vendor/lib')]);
    expect(stagedModes().some((entry) => entry.startsWith('160000'))).toBe(false);
  });

  it('says a commit made in the same command still holds it', async () => {
    nestedRepository('vendor/lib');
    const result = await bash('git add vendor/lib && git commit -q -m x');
    expect(result.metadata?.gitlink_committed_in).toEqual([project.root]);
    expect(stagedModes().some((entry) => entry.startsWith('160000'))).toBe(false);
  });

  it('leaves ordinary adds and commits alone', async () => {
    writeFileSync(join(project.root, 'new.txt'), 'new\n');
    const result = await bash('git add new.txt && git commit -q -m add');
    expect(result.error ?? '').toBe('');
    expect(git(project.root, 'ls-files', 'new.txt').trim()).toBe('new.txt');
    expect(result.metadata?.removed_gitlinks).toBeUndefined();
  });

  it('keeps a submodule the protected .gitmodules registers', async () => {
    nestedRepository('vendor/lib');
    writeFileSync(join(project.root, '.gitmodules'), '[submodule "lib"]\n\tpath = vendor/lib\n\turl = ./vendor/lib\n');
    const result = await bash('git add vendor/lib');
    expect(result.error ?? '').toBe('');
    expect(stagedModes()).toContain('160000 vendor/lib');
  });

  it('moves aside an index it cannot read after the command changed it', async () => {
    // The text policy has no update-index; python reaches it all the same.
    const result = await bash(`python3 -c "import subprocess; subprocess.run(['git', 'update-index', '--split-index'], check=True)"`);
    expect(result.metadata?.unchecked_indexes).toEqual([indexPath()]);
    expect(existsSync(`${indexPath()}.unchecked`)).toBe(true);
  });

  it('watches the index of a repository whose git directory is named by bytes that are not UTF-8', async () => {
    // `odd\xff` has no text path; the work tree `tree` reaches it through a `gitdir:` file.
    git(project.root, 'init', '-q', 'plain');
    renameSync(join(project.root, 'plain'), Buffer.concat([Buffer.from(join(project.root, 'odd')), Buffer.from([0xff])]));
    mkdirSync(join(project.root, 'tree'));
    writeFileSync(join(project.root, 'tree', '.git'), Buffer.concat([Buffer.from('gitdir: ../odd'), Buffer.from([0xff]), Buffer.from('/.git\n')]));
    nestedRepository('tree/vendor/lib');
    const tree = join(project.root, 'tree');
    const result = await bashTool.execute(bashTool.parameters.parse({ command: 'git add vendor/lib', cwd: tree }), toolContext(project));
    expect(result.metadata?.removed_gitlinks).toEqual([join(tree, 'vendor/lib')]);
    expect(git(tree, 'ls-files', '-s')).not.toContain('160000');
  });

  it('is not held by a FIFO planted as the index and HEAD (the service reads them itself)', async () => {
    const plant = "import os\nfor name in ['index', 'HEAD']:\n    os.remove('.git/' + name)\n    os.mkfifo('.git/' + name)";
    const result = await bash(`python3 -c "${plant}"`);
    expect(result.metadata?.unchecked_indexes).toEqual([indexPath()]);
    // The next command reads HEAD before it starts.
    expect((await bash('echo still here')).data).toContain('still here');
  }, 20_000);
});

describe('the gitlink guard of a service', () => {
  /** A gitlink staged without the sandbox or a nested repository: `update-index` with any commit name. */
  const stageGitlink = (root: string, path: string): void => void git(root, 'update-index', '--add', '--cacheinfo', `160000,${'1'.repeat(40)},${path}`);

  it('never again counts a gitlink it took out as already there, however many indexes it rewrote since', async () => {
    const guard = new GitlinkGuard();
    try {
      const takeOut = async (root: string): Promise<string[]> => {
        const watch = await guard.watch(root, project.sandbox);
        stageGitlink(root, 'vendor/lib');
        return (await watch.check()).removed;
      };
      expect(await takeOut(project.root)).toEqual([join(project.root, 'vendor/lib')]);
      // Gitlinks taken out of 64 other indexes: the module-wide map was cleared at 64.
      for (let i = 0; i < 64; i++) {
        const other = join(project.root, 'others', String(i));
        mkdirSync(other, { recursive: true });
        git(other, 'init', '-q');
        expect(await takeOut(other)).toHaveLength(1);
      }
      // A concurrent run's command put it back before this command started; this one changes the index.
      stageGitlink(project.root, 'vendor/lib');
      const watch = await guard.watch(project.root, project.sandbox);
      writeFileSync(join(project.root, 'new.txt'), 'new\n');
      git(project.root, 'add', 'new.txt');
      expect((await watch.check()).removed).toEqual([join(project.root, 'vendor/lib')]);
      expect(stagedModes().some((entry) => entry.startsWith('160000'))).toBe(false);
    } finally {
      await guard.close();
    }
  }, 120_000);

  it('judges an index the worker cannot read in its deadline as unreadable: moved aside, the service unharmed', async () => {
    const guard = new GitlinkGuard({ deadlineMs: 1 });
    try {
      const watch = await guard.watch(project.root, project.sandbox);
      stageGitlink(project.root, 'vendor/lib');
      const report = await watch.check();
      expect(report.unreadable).toEqual([indexPath()]);
      expect(existsSync(`${indexPath()}.unchecked`)).toBe(true);
    } finally {
      await guard.close();
    }
  });
});
