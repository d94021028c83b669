import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ShadowRepo } from '../../src/checkpoints/shadow-repo.js';
import { sampleEventLoop } from '../tools/sandbox/red-team/support.js';
import { hugeIgnoreFile } from '../tools/search/large-ignore-files.js';

/** Longest the event loop may be held (in main-thread CPU time) while the snapshot is taken. */
const MAX_STALL_MS = 100;

let base: string;
let workingDir: string;
let root: string;
beforeEach(() => {
  base = realpathSync(mkdtempSync(join(tmpdir(), 'mada-search-ignores-limits-')));
  workingDir = join(base, 'wd');
  mkdirSync(workingDir);
  root = mkdtempSync(join(tmpdir(), 'mada-search-ignores-limits-root-'));
});
afterEach(() => {
  rmSync(base, { recursive: true, force: true });
  rmSync(root, { recursive: true, force: true });
});

function write(files: Record<string, string>): void {
  for (const [path, content] of Object.entries(files)) {
    mkdirSync(dirname(join(workingDir, path)), { recursive: true });
    writeFileSync(join(workingDir, path), content);
  }
}

describe('a checkpoint of a working directory with a planted ignore file of thousands of wildcard rules', () => {
  it('is taken without holding the event loop when a 16 MiB .gitignore holds 52,000, and holds the files the rules leave', async () => {
    write({
      'app.ts': 'app\n',
      'debug.log': 'log\n',
      'keep.log': 'kept\n',
      'build/out.js': 'out\n',
      'src/main.ts': 'main\n',
      'secret.txt': 'hidden from search\n',
      'late-rule.txt': 'named after the limit\n',
      // A .ignore file makes the checkpoint judge paths as glob_files does, reading every ignore file.
      '.ignore': 'secret.txt\n',
      '.gitignore': hugeIgnoreFile(['*.log', 'build/', '!keep.log'], 'late-rule.txt'),
    });
    const gitDir = ShadowRepo.gitDirFor(root, workingDir);
    const repo = new ShadowRepo({ gitDir, workTree: workingDir });
    const { value, longestStallMs } = await sampleEventLoop(() => repo.snapshot({ maxFileBytes: 32 * 1024 * 1024, excludedPaths: [] }));
    const listing = execFileSync('git', ['--git-dir', gitDir, 'ls-tree', '-r', '-z', '--name-only', value.tree], { encoding: 'utf8' });
    // git reads the whole .gitignore itself, so `late-rule.txt` stays out as ripgrep leaves it out.
    expect(listing.split('\0').filter(Boolean).sort()).toEqual(['.gitignore', '.ignore', 'app.ts', 'keep.log', 'src/main.ts']);
    expect(longestStallMs, 'the event loop was held').toBeLessThan(MAX_STALL_MS);
  }, 180_000);

  it('is taken without holding the event loop when a .ignore as large as snapshots read (1 MiB) holds 3,000 wildcard rules', async () => {
    write({
      'app.ts': 'app\n',
      'debug.log': 'log\n',
      'keep.log': 'kept\n',
      'build/out.js': 'out\n',
      'src/main.ts': 'main\n',
      'late-rule.txt': 'named after the limit\n',
      // Snapshots pass a .ignore over 1 MiB by as if it were missing.
      '.ignore': hugeIgnoreFile(['*.log', 'build/', '!keep.log'], 'late-rule.txt', 1024 * 1024, 3000),
    });
    const gitDir = ShadowRepo.gitDirFor(root, workingDir);
    const repo = new ShadowRepo({ gitDir, workTree: workingDir });
    const { value, longestStallMs } = await sampleEventLoop(() => repo.snapshot({ maxFileBytes: 32 * 1024 * 1024, excludedPaths: [] }));
    expect(longestStallMs, 'the event loop was held').toBeLessThan(MAX_STALL_MS);
    const listing = execFileSync('git', ['--git-dir', gitDir, 'ls-tree', '-r', '-z', '--name-only', value.tree], { encoding: 'utf8' });
    // git hides `late-rule.txt` by the exclude lines made of the .ignore file, but the .ignore file
    // re-includes (`!keep.log`), so the checkpoint asks its own verdict, which stops at the limit of
    // 500 wildcard rules: the file is kept rather than lost.
    expect(listing.split('\0').filter(Boolean).sort()).toEqual(['.ignore', 'app.ts', 'keep.log', 'late-rule.txt', 'src/main.ts']);
  }, 180_000);
});
