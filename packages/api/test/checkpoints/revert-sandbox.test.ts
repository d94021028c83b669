import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { CheckpointService } from '../../src/checkpoints/checkpoint-service.js';
import type { RunRecord } from '../../src/db/run-repository.js';
import { tempDir } from '../../../../test/helpers/temp-dirs.js';

/*
 * A revert writes only inside the sandbox: with the sandbox on (SANDBOX_ENABLED=true) but not
 * working here, it refuses and changes nothing, as the shell tools refuse.
 */

let scratch: string;
let workingDir: string;
let savedPath: string | undefined;
beforeEach(() => {
  scratch = tempDir('mada-revert-sandbox-');
  workingDir = join(scratch, 'wd');
  mkdirSync(workingDir);
  savedPath = process.env.PATH;
});
afterEach(() => {
  process.env.PATH = savedPath;
  execFileSync('rm', ['-rf', scratch]);
});

it('refuses, and leaves the files as the run left them, when bubblewrap cannot be found', async () => {
  const service = new CheckpointService({ root: join(scratch, 'root'), maxFileBytes: 1024 * 1024, excludedPaths: [], log: { warn: () => undefined } });
  writeFileSync(join(workingDir, 'a.txt'), 'before\n');
  const id = '55555555-5555-4555-8555-000000000001';
  const checkpoint = service.forRun(id, workingDir);
  await checkpoint.beforeModify();
  writeFileSync(join(workingDir, 'a.txt'), 'after\n');
  await checkpoint.finish();

  // A PATH with git but no bwrap: the sandbox is on and unavailable.
  const bin = join(scratch, 'bin');
  mkdirSync(bin);
  symlinkSync(execFileSync('sh', ['-c', 'command -v git'], { encoding: 'utf8' }).trim(), join(bin, 'git'));
  process.env.PATH = bin;
  const run = { id, workingDir, status: 'succeeded' } as RunRecord;
  await expect(service.revert(run, true)).rejects.toThrow('Revert needs the sandbox (bubblewrap), which is not available: bubblewrap (bwrap) is not installed');
  expect(readFileSync(join(workingDir, 'a.txt'), 'utf8')).toBe('after\n');
});
