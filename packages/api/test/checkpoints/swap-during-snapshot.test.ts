import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, realpathSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it, vi } from 'vitest';
import { CheckpointService } from '../../src/checkpoints/checkpoint-service.js';
import { ShadowRepo } from '../../src/checkpoints/shadow-repo.js';
import type { RunRecord } from '../../src/db/run-repository.js';

/*
 * A concurrent run (or a process a run left behind) swaps the working directory for a link to a
 * directory outside while a snapshot reads the tree, and swaps it back before the snapshot's
 * second look at the path: both checks of the pin pass. The swap is made deterministic by doing
 * it around the snapshot itself. Whatever the snapshot read is what `GET /runs/{id}/changes`
 * shows the run's user: nothing of the outside directory may be in it.
 */

let scratch: string;
let workingDir: string;
let outside: string;
const savedPath = process.env.PATH;
/**
 * The files the run changes: one goes on top of the last tree read by the service itself
 * (overlay-tree.ts), more than 64 make git hash them (update-index).
 */
const FEW = ['a.txt'];
const MANY = Array.from({ length: 70 }, (_, i) => `f${i}.txt`);
const NAMES = [...FEW, ...MANY];

beforeEach(() => {
  scratch = realpathSync(mkdtempSync(join(tmpdir(), 'mada-snapswap-')));
  workingDir = join(scratch, 'proj');
  outside = join(scratch, 'outside');
  mkdirSync(workingDir);
  mkdirSync(outside);
  // Another user's files: some under names the run also has, one the run never had.
  for (const name of NAMES) {
    writeFileSync(join(workingDir, name), 'before\n');
    writeFileSync(join(outside, name), `the outside ${name}\n`);
  }
  writeFileSync(join(outside, 'secret.txt'), 'the outside secret\n');
});
afterEach(() => {
  vi.restoreAllMocks();
  process.env.PATH = savedPath;
  execFileSync('rm', ['-rf', scratch]);
});

const service = (sandboxEnabled = true): CheckpointService =>
  new CheckpointService({
    root: join(scratch, 'root'),
    maxFileBytes: 1024 * 1024,
    excludedPaths: [],
    log: { warn: () => undefined },
    sandbox: { enabled: sandboxEnabled, memoryMb: 2048, maxProcesses: 256 },
  });

/** While each snapshot runs, the working directory's path leads to `outside`; before and after, to the run's directory. */
function swapDuringSnapshots(): void {
  const snapshot = ShadowRepo.prototype.snapshot;
  const moved = `${workingDir}.moved`;
  vi.spyOn(ShadowRepo.prototype, 'snapshot').mockImplementation(async function (this: ShadowRepo, ...args) {
    renameSync(workingDir, moved);
    symlinkSync(outside, workingDir);
    try {
      return await snapshot.apply(this, args);
    } finally {
      rmSync(workingDir);
      renameSync(moved, workingDir);
    }
  });
}

it.each([
  { files: 'one file (read by the service)', changed: FEW },
  { files: '70 files (read by git)', changed: MANY },
])('keeps the outside files out of a snapshot taken while the working directory was swapped for a link: $files', async ({ changed }) => {
  const checkpoints = service();
  const id = `66666666-6666-4666-8666-00000000000${changed.length === 1 ? 1 : 3}`;
  const checkpoint = checkpoints.forRun(id, workingDir);
  await checkpoint.beforeModify();
  for (const name of changed) writeFileSync(join(workingDir, name), 'after\n');
  swapDuringSnapshots();
  await checkpoint.finish();
  vi.restoreAllMocks();

  const changes = await checkpoints.changes({ id, workingDir, status: 'succeeded' } as RunRecord);
  expect(changes.diff).not.toContain('outside');
  expect(changes.diff).not.toContain('secret.txt');
  // The run's own changes, read from its own directory while the path led elsewhere.
  expect(changes.files.map((file) => file.path).sort()).toEqual([...changed].sort());
  expect(changes.diff).toContain('+after');
}, 20_000);

it('takes no snapshot when the sandbox is on but bubblewrap cannot be found, rather than reading the tree by its path', async () => {
  const checkpoints = service();
  const bin = join(scratch, 'bin');
  mkdirSync(bin);
  symlinkSync(execFileSync('sh', ['-c', 'command -v git'], { encoding: 'utf8' }).trim(), join(bin, 'git'));
  process.env.PATH = bin;
  const id = '66666666-6666-4666-8666-000000000002';
  const checkpoint = checkpoints.forRun(id, workingDir);
  await checkpoint.beforeModify();
  await checkpoint.finish();
  await expect(checkpoints.changes({ id, workingDir, status: 'succeeded' } as RunRecord)).rejects.toThrow(
    'checkpoints need the sandbox (bubblewrap) to read the working directory, which is not available: bubblewrap (bwrap) is not installed',
  );
}, 20_000);
