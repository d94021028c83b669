import { spawnSync, type SpawnSyncReturns } from 'node:child_process';
import { closeSync, constants, mkdirSync, mkdtempSync, openSync, readdirSync, readFileSync, realpathSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { detectSandbox, isAvailable, SandboxLauncher } from '../../../src/tools/sandbox/launcher.js';

/*
 * A directory bound by descriptor (`--bind-fd`), as a checkpoint revert binds the run's working
 * directory: the sandbox gets the directory that was opened, whatever its path leads to by the
 * time bubblewrap starts, and nothing else of the host is writable.
 */

let base: string;
let outside: string;
beforeEach(() => {
  // Outside /tmp, which the sandbox replaces with its own.
  base = realpathSync(mkdtempSync(join('/var/tmp', 'mada-bound-')));
  outside = realpathSync(mkdtempSync(join('/var/tmp', 'mada-bound-outside-')));
});
afterEach(() => {
  rmSync(base, { recursive: true, force: true });
  rmSync(outside, { recursive: true, force: true });
});

it('writes into the held directory after its path was swapped for a link, and nowhere else', async () => {
  const availability = await detectSandbox({ sandboxEnabled: true });
  if (!isAvailable(availability)) throw new Error(`bubblewrap is required for this test: ${availability.reason}`);
  const dir = join(base, 'proj');
  mkdirSync(dir);
  const fd = openSync(dir, constants.O_RDONLY | constants.O_DIRECTORY);
  renameSync(dir, `${dir}.old`);
  symlinkSync(outside, dir);
  const spec = { allowedPaths: [], writable: true, network: false, readOnlyPaths: [], hiddenPaths: [], toolchains: [], tmpBytes: 1024 * 1024, boundDirectories: [{ fd: 3, target: '/mada/workdir' }] };
  const launcher = new SandboxLauncher(availability, spec, { memoryMb: 256, maxProcesses: 16 });
  try {
    const { file, args } = launcher.launch('/bin/sh', ['-c', `echo kept > written.txt; echo escaped > ${outside}/escaped.txt; echo escaped > ${dir}/escaped.txt; ls ${base}`], '/mada/workdir');
    const result = spawnSync(file, args, { stdio: ['ignore', 'pipe', 'pipe', fd], encoding: 'utf8' });
    // The shell ran (its first write is checked below); the other two writes failed inside.
    expect(result.stderr).toMatch(/escaped\.txt/);
  } finally {
    launcher.dispose();
    closeSync(fd);
  }
  expect(readFileSync(join(`${dir}.old`, 'written.txt'), 'utf8')).toBe('kept\n');
  expect(readdirSync(outside)).toEqual([]);
  expect(readdirSync(base).sort()).toEqual(['proj', 'proj.old']);
});

it('shows a directory bound read-only by descriptor, and lets nothing be written into it', async () => {
  const availability = await detectSandbox({ sandboxEnabled: true });
  if (!isAvailable(availability)) throw new Error(`bubblewrap is required for this test: ${availability.reason}`);
  const dir = join(base, 'proj');
  mkdirSync(dir);
  writeFileSync(join(dir, 'a.txt'), 'held\n');
  const fd = openSync(dir, constants.O_RDONLY | constants.O_DIRECTORY);
  const spec = {
    allowedPaths: [],
    writable: true,
    network: false,
    readOnlyPaths: [],
    hiddenPaths: [],
    toolchains: [],
    tmpBytes: 1024 * 1024,
    boundDirectories: [{ fd: 3, target: '/mada/worktree', readOnly: true }],
  };
  const launcher = new SandboxLauncher(availability, spec, { memoryMb: 256, maxProcesses: 16 });
  let result: SpawnSyncReturns<string> | undefined;
  try {
    const { file, args } = launcher.launch('/bin/sh', ['-c', 'cat a.txt; echo changed > a.txt; echo new > b.txt'], '/mada/worktree');
    result = spawnSync(file, args, { stdio: ['ignore', 'pipe', 'pipe', fd], encoding: 'utf8' });
  } finally {
    launcher.dispose();
    closeSync(fd);
  }
  expect(result?.stdout).toBe('held\n');
  expect(result?.stderr).toMatch(/Read-only file system/);
  expect(readFileSync(join(dir, 'a.txt'), 'utf8')).toBe('held\n');
  expect(readdirSync(dir)).toEqual(['a.txt']);
});
