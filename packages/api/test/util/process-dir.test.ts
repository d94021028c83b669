import { spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdirSync, readFileSync, readlinkSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { processDir, removeProcessDir, sweepProcessDirs } from '../../src/util/process-dir.js';
import { tempDir } from '../../../../test/helpers/temp-dirs.js';

const namespace = /^pid:\[(\d+)\]$/.exec(readlinkSync('/proc/self/ns/pid'))![1]!;

/** The pid of a process that has ended (and been reaped). */
const endedPid = (): number => spawnSync('true').pid!;

function dirOf(root: string, ns: string, pid: number, suffix: string): string {
  const dir = join(root, `mada-process-${ns}-${pid}-${suffix}`);
  mkdirSync(join(dir, 'etc-abcdef'), { recursive: true });
  writeFileSync(join(dir, 'etc-abcdef', 'passwd'), 'root:x:0:0::/root:/bin/sh\n');
  return dir;
}

describe("a service process's own temp directory", () => {
  it('is swept once its process has ended (a SIGKILL skips exit hooks), and only then', async () => {
    const root = tempDir('mada-sweep-');
    const ended = dirOf(root, namespace, endedPid(), 'Ended1');
    const parent = dirOf(root, namespace, process.ppid, 'Alive1');
    const mine = dirOf(root, namespace, process.pid, 'Mine01');
    // A pid of another pid namespace (a container sharing the directory) says nothing here.
    const foreign = dirOf(root, `${namespace}9`, endedPid(), 'Other1');
    // A link named like one is not followed: what it points to is not a process's directory.
    const target = dirOf(tempDir('mada-sweep-target-'), namespace, 1, 'Target');
    symlinkSync(target, join(root, `mada-process-${namespace}-${endedPid()}-Link01`));

    expect(await sweepProcessDirs(root)).toEqual([ended]);
    expect(existsSync(ended)).toBe(false);
    for (const kept of [parent, mine, foreign, join(target, 'etc-abcdef', 'passwd')]) expect(existsSync(kept)).toBe(true);
  });

  it('is swept when its process is a zombie nobody reaps (killed under a parent that never waits)', async () => {
    const root = tempDir('mada-sweep-');
    // The shell starts a short command in the background, then becomes a sleep that never waits
    // for it: the short one stays a zombie as long as the sleep runs (it outlives the exec, so the
    // shell cannot have reaped it first).
    const parent = spawn('sh', ['-c', 'sleep 0.1 & echo $!; exec sleep 60'], { stdio: ['ignore', 'pipe', 'ignore'] });
    try {
      const [chunk] = (await once(parent.stdout!, 'data')) as [Buffer];
      const zombie = Number(chunk.toString().trim());
      const state = () => /^.*\) (\S)/s.exec(readFileSync(`/proc/${zombie}/stat`, 'latin1'))?.[1];
      while (state() !== 'Z') await new Promise((resolve) => setTimeout(resolve, 20));
      const dir = dirOf(root, namespace, zombie, 'Zombie');
      expect(await sweepProcessDirs(root)).toEqual([dir]);
    } finally {
      parent.kill('SIGKILL');
    }
  });

  it('is one per process, and removed on request (the end of a test file, the exit hook)', () => {
    const dir = processDir();
    expect(processDir()).toBe(dir);
    expect(dir).toContain(`mada-process-${namespace}-${process.pid}-`);
    removeProcessDir();
    expect(existsSync(dir)).toBe(false);
  });
});
