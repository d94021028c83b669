import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
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
});
