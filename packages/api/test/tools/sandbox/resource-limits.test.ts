import { spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { findPidsCgroup, PidsCgroupPool } from '../../../src/tools/sandbox/resource-limits.js';

const base = findPidsCgroup();
if (base === undefined) console.warn('resource-limits tests: no delegated pids cgroup here (not root, or no pids controller); the pool is not used on this machine');

describe.runIf(base !== undefined)('the pids cgroup pool', () => {
  it('removes the empty cgroups a killed service left behind, and never reuses their names', () => {
    const dead = spawnSync('true').pid as number;
    const stale = join(base as string, `mada-${dead}-0badcafe-0`);
    mkdirSync(stale);
    const first = new PidsCgroupPool(base as string);
    expect(existsSync(stale)).toBe(false);
    const second = new PidsCgroupPool(base as string);
    const a = first.acquire(16);
    const b = second.acquire(16);
    expect(a).not.toBe(b);
    first.release(a);
    second.release(b);
  });

  it('removes the cgroups of a service that is a zombie nobody reaps (killed under a parent that never waits)', async () => {
    // The shell starts a short command in the background, then becomes a sleep that never waits for
    // it (before the short one ends, so the shell cannot have reaped it).
    const parent = spawn('sh', ['-c', 'sleep 0.1 & echo $!; exec sleep 60'], { stdio: ['ignore', 'pipe', 'ignore'] });
    try {
      const [chunk] = (await once(parent.stdout!, 'data')) as [Buffer];
      const zombie = Number(chunk.toString().trim());
      const state = (): string | undefined => /^.*\) (\S)/s.exec(readFileSync(`/proc/${zombie}/stat`, 'latin1'))?.[1];
      while (state() !== 'Z') await new Promise((resolve) => setTimeout(resolve, 20));
      const stale = join(base as string, `mada-${zombie}-0badcafe-0`);
      mkdirSync(stale);
      new PidsCgroupPool(base as string);
      expect(existsSync(stale)).toBe(false);
    } finally {
      parent.kill('SIGKILL');
    }
  });
});
