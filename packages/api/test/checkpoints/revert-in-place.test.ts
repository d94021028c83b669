import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, realpathSync, watch, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { CheckpointService } from '../../src/checkpoints/checkpoint-service.js';
import type { RunRecord } from '../../src/db/run-repository.js';

/*
 * A revert puts a file back by renaming a new one over it, never by removing it and writing it
 * again under its own name: meanwhile the path would be missing (a concurrent run's snapshot would
 * take it for deleted) or half written. Judged by what the kernel reports for the directory
 * (inotify): under its own name the file is only ever replaced whole, never written to.
 */

let scratch: string;
let workingDir: string;
beforeEach(() => {
  scratch = realpathSync(mkdtempSync(join(tmpdir(), 'mada-revert-in-place-')));
  workingDir = join(scratch, 'wd');
  mkdirSync(workingDir);
});
afterEach(() => execFileSync('rm', ['-rf', scratch]));

it.each([true, false])('replaces a reverted file whole, never missing or half written under its name (sandbox %s)', async (sandboxed) => {
  const service = new CheckpointService({
    root: join(scratch, 'root'),
    maxFileBytes: 1024 * 1024,
    excludedPaths: [],
    log: { warn: () => undefined },
    sandbox: { enabled: sandboxed, memoryMb: 2048, maxProcesses: 256 },
  });
  writeFileSync(join(workingDir, 'a.txt'), 'before\n'.repeat(1000));
  const id = `55555555-5555-4555-8555-00000000000${sandboxed ? 1 : 2}`;
  const checkpoint = service.forRun(id, workingDir);
  await checkpoint.beforeModify();
  writeFileSync(join(workingDir, 'a.txt'), 'after\n');
  await checkpoint.finish();

  const events: string[] = [];
  let sentinel: () => void = () => undefined;
  const seen = new Promise<void>((resolve) => (sentinel = resolve));
  const watcher = watch(workingDir, (event, name) => {
    events.push(`${event} ${String(name)}`);
    if (name === 'sentinel') sentinel();
  });
  try {
    const run = { id, workingDir, status: 'succeeded' } as RunRecord;
    await service.revert(run, true);
    // inotify reports in order: once the sentinel is in, every event of the revert is.
    writeFileSync(join(workingDir, 'sentinel'), '');
    await seen;
  } finally {
    watcher.close();
  }
  expect(readFileSync(join(workingDir, 'a.txt'), 'utf8')).toBe('before\n'.repeat(1000));
  expect(events.filter((event) => event === 'change a.txt')).toEqual([]);
  expect(events.filter((event) => event === 'rename a.txt')).toEqual(['rename a.txt']);
});
