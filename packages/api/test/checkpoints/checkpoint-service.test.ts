import { execFileSync } from 'node:child_process';
import { readdirSync, statfsSync, truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../../../../test/helpers/temp-dirs.js';
import { CheckpointService } from '../../src/checkpoints/checkpoint-service.js';
import type { RunRecord } from '../../src/db/run-repository.js';
import type { FloorSettings } from '../../src/tools/sandbox/disk-floor.js';

const quiet = { warn: () => undefined };

function fixture(gitMemoryBytes?: number, floor?: (root: string) => FloorSettings) {
  // Both removed when the file ends, the snapshots of a test that failed half-way included.
  const workingDir = tempDir('mada-ckpt-wd-');
  const root = tempDir('mada-ckpt-root-');
  const service = new CheckpointService({
    root,
    maxFileBytes: 1024 * 1024,
    excludedPaths: [],
    log: quiet,
    ...(gitMemoryBytes === undefined ? {} : { gitMemoryBytes }),
    ...(floor === undefined ? {} : { floor: floor(root) }),
  });
  return { workingDir, root, service };
}

/** Only the fields checkpoints read. */
const runRecord = (id: string, workingDir: string, status: RunRecord['status']): RunRecord => ({ id, workingDir, status }) as RunRecord;

describe('checkpoints of runs', () => {
  it('take the end snapshot of a run interrupted before it could, when the sweep finds it', async () => {
    const { workingDir, root, service } = fixture();
    writeFileSync(join(workingDir, 'a.txt'), 'before\n');
    const id = '11111111-1111-4111-8111-111111111111';
    await service.forRun(id, workingDir).beforeModify();
    writeFileSync(join(workingDir, 'a.txt'), 'after\n');
    // The service stopped here: no finish(). At start-up the run is found interrupted.
    const interrupted = runRecord(id, workingDir, 'interrupted');
    await service.sweep(async () => interrupted);
    const [shadow] = readdirSync(root);
    expect(execFileSync('git', ['--git-dir', join(root, shadow!), 'for-each-ref', '--format=%(refname)'], { encoding: 'utf8' })).toContain(`refs/mada/runs/${id}/after`);
    writeFileSync(join(workingDir, 'a.txt'), 'later still\n');
    expect((await service.changes(interrupted)).files).toEqual([{ path: 'a.txt', change: 'modified', additions: 1, deletions: 1 }]);
  });

  it("tell a run's changes from those the user made between runs, when each run changed only a file or two", async () => {
    const { workingDir, service } = fixture();
    for (let i = 0; i < 20; i++) writeFileSync(join(workingDir, `f${i}.txt`), `${i}\n`);
    const run = async (id: string, change: () => void) => {
      const checkpoint = service.forRun(id, workingDir);
      await checkpoint.beforeModify();
      change();
      await checkpoint.finish();
      return (await service.changes(runRecord(id, workingDir, 'succeeded'))).files.map(({ path, change: kind }) => `${kind} ${path}`);
    };
    expect(await run('33333330-3333-4333-8333-333333333333', () => writeFileSync(join(workingDir, 'f1.txt'), 'run one\n'))).toEqual(['modified f1.txt']);
    // Between runs, the user edits the file the last run changed (same size) and adds one.
    writeFileSync(join(workingDir, 'f1.txt'), 'user 1!\n');
    writeFileSync(join(workingDir, 'mine.txt'), 'mine\n');
    expect(await run('33333331-3333-4333-8333-333333333333', () => writeFileSync(join(workingDir, 'f2.txt'), 'run two\n'))).toEqual(['modified f2.txt']);
    // The user puts back what the first run changed; the next run changes it again.
    writeFileSync(join(workingDir, 'f1.txt'), '1\n');
    expect(await run('33333332-3333-4333-8333-333333333333', () => writeFileSync(join(workingDir, 'f1.txt'), 'run three\n'))).toEqual(['modified f1.txt']);
    const { diff } = await service.changes(runRecord('33333332-3333-4333-8333-333333333333', workingDir, 'succeeded'));
    expect(diff).toContain('-1\n+run three\n');
  });

  it('keep the snapshots of concurrent runs on one working directory apart', async () => {
    const { workingDir, service } = fixture();
    for (let i = 0; i < 20; i++) writeFileSync(join(workingDir, `f${i}.txt`), `${i}\n`);
    const ids = Array.from({ length: 6 }, (_, i) => `2222222${i}-2222-4222-8222-222222222222`);
    const checkpoints = ids.map((id) => service.forRun(id, workingDir));
    await Promise.all(checkpoints.map((c) => c.beforeModify()));
    await Promise.all(
      checkpoints.map(async (checkpoint, i) => {
        writeFileSync(join(workingDir, `new${i}.txt`), `run ${i}\n`);
        await checkpoint.finish();
      }),
    );
    for (const id of ids) {
      const { files } = await service.changes(runRecord(id, workingDir, 'succeeded'));
      // Each run's end snapshot holds at least its own new file, and every snapshot is whole.
      expect(files.every((file) => file.change === 'added' && /^new\d\.txt$/.test(file.path))).toBe(true);
      expect(files.map((file) => file.path)).toContain(`new${ids.indexOf(id)}.txt`);
    }
  });

  it('fail a snapshot, with the reason, rather than let git read a huge sparse .gitignore into the service host’s memory', async () => {
    // The cap is lowered for the test; a run's `truncate -s 50G .gitignore` meets the default one.
    const { workingDir, service } = fixture(256 * 1024 * 1024);
    writeFileSync(join(workingDir, 'a.txt'), 'before\n');
    const id = '55555555-5555-4555-8555-555555555555';
    const checkpoint = service.forRun(id, workingDir);
    await checkpoint.beforeModify();
    writeFileSync(join(workingDir, '.gitignore'), '');
    truncateSync(join(workingDir, '.gitignore'), 512 * 1024 * 1024);
    await checkpoint.finish();
    await expect(service.changes(runRecord(id, workingDir, 'succeeded'))).rejects.toThrow(/^No checkpoint for this run: the snapshot at the end of the run failed: git [a-z-]+ failed \(128\): fatal: Out of memory/);
  });

  it("take no snapshot while DATA_DIR's file system is below the free-space floor, and say why", async () => {
    // A floor 1 GiB above what is free now: crossed already (the machine's disk cannot be shrunk for a test).
    const crossed = (root: string): FloorSettings => {
      const stats = statfsSync(root);
      return { sandboxMinFreeMb: Math.floor((stats.bavail * stats.bsize) / (1024 * 1024)) + 1024, sandboxMinFreePercent: 0, sandboxMinFreeInodes: 0 };
    };
    const { workingDir, root, service } = fixture(undefined, crossed);
    writeFileSync(join(workingDir, 'a.txt'), 'before\n');
    const id = '66666666-6666-4666-8666-666666666666';
    const checkpoint = service.forRun(id, workingDir);
    await checkpoint.beforeModify();
    await checkpoint.finish();
    // Only the reason is recorded (a few bytes): no tree of the working directory was stored.
    const refs = readdirSync(root).map((shadow) => execFileSync('git', ['--git-dir', join(root, shadow), 'for-each-ref', '--format=%(refname)'], { encoding: 'utf8' }));
    expect(refs.join('')).not.toContain(`refs/mada/runs/${id}/before`);
    await expect(service.changes(runRecord(id, workingDir, 'succeeded'))).rejects.toThrow(
      /^No checkpoint for this run: the snapshot before the run failed: no room for it: the file system of the service's data has \d+ MiB free, below the floor of \d+ MiB/,
    );
  });
});
