import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bwrapArguments, bwrapLauncher, detectConfinement, type Confinement } from '../../../src/tools/sandbox/bubblewrap.js';
import type { Launcher } from '../../../src/tools/sandbox/exec/run-pipeline.js';
import { execute, pipeline, run, sequence, testEnv } from './support/invocations.js';
import { createProject, git, type Project } from './support/project.js';

/*
 * These tests need bubblewrap (Debian package `bubblewrap`) able to create namespaces. When it
 * cannot, they fail: the OS sandbox is part of the contract, not an optional extra.
 */

let project: Project;
let elsewhere: string;
let confinement: Confinement;
let launcher: Launcher;

beforeAll(async () => {
  project = createProject();
  // Outside the allowed paths and outside /tmp (which the sandbox replaces with its own).
  elsewhere = realpathSync(mkdtempSync(join('/var/tmp', 'mada-bwrap-outside-')));
  confinement = await detectConfinement({ sandboxEnabled: true }, testEnv.PATH);
  if (!confinement.active || confinement.bwrapPath === undefined) throw new Error(`bubblewrap is required for these tests: ${confinement.reason}`);
  launcher = bwrapLauncher({ bwrapPath: confinement.bwrapPath, allowedPaths: [project.root], network: false }, project.root);
});

afterAll(() => {
  project.cleanup();
  rmSync(elsewhere, { recursive: true, force: true });
});

const confined = (argv: string[], timeoutMs = 20_000) => execute(sequence(pipeline(run(argv))), project.root, { launcher, timeoutMs });

describe('confinement detection', () => {
  it('finds a working bubblewrap on this machine', () => {
    expect(confinement).toMatchObject({ active: true });
  });

  it('reports confinement off when the setting disables it', async () => {
    expect(await detectConfinement({ sandboxEnabled: false })).toEqual({ active: false, reason: 'disabled by SANDBOX_ENABLED=false' });
  });

  it('reports confinement off when bwrap is not installed', async () => {
    const result = await detectConfinement({ sandboxEnabled: true }, '/nonexistent');
    expect(result).toMatchObject({ active: false, reason: 'bubblewrap (bwrap) is not installed' });
  });
});

describe('the OS sandbox holds even when the text policy is bypassed', () => {
  // Each argv below would be refused by the text policy; here it goes to the confined runner directly.
  it('stops a write outside the allowed paths', async () => {
    const target = join(elsewhere, 'escaped.txt');
    const result = await confined(['sh', '-c', `echo pwned > ${target}`]);
    expect(result.exitCode).not.toBe(0);
    expect(result.output).toContain('Read-only file system');
    expect(existsSync(target)).toBe(false);
  });

  it('stops writes to system files', async () => {
    const result = await confined(['touch', '/etc/mada-bwrap-test']);
    expect(result.exitCode).not.toBe(0);
    expect(existsSync('/etc/mada-bwrap-test')).toBe(false);
  });

  it('keeps /tmp private: what is written there never reaches the host', async () => {
    const hostTmp = realpathSync(mkdtempSync(join(tmpdir(), 'mada-bwrap-tmp-')));
    try {
      const result = await confined(['sh', '-c', `mkdir -p ${hostTmp} && echo x > ${hostTmp}/inside-sandbox.txt && cat ${hostTmp}/inside-sandbox.txt`]);
      expect(result).toMatchObject({ exitCode: 0, output: 'x\n' });
      expect(existsSync(join(hostTmp, 'inside-sandbox.txt'))).toBe(false);
    } finally {
      rmSync(hostTmp, { recursive: true, force: true });
    }
  });

  it('allows writes inside the allowed paths', async () => {
    const result = await confined(['sh', '-c', 'echo kept > kept.txt']);
    expect(result.exitCode).toBe(0);
    expect(readFileSync(join(project.root, 'kept.txt'), 'utf8')).toBe('kept\n');
  });

  it('drops every capability, so the read-only root cannot be remounted', async () => {
    const caps = await confined(['sh', '-c', 'grep CapEff /proc/self/status']);
    expect(caps.output).toMatch(/CapEff:\s+0+\n/);
    const remount = await confined(['sh', '-c', 'mount -o remount,rw,bind / && touch /etc/mada-remounted']);
    expect(remount.exitCode).not.toBe(0);
    expect(existsSync('/etc/mada-remounted')).toBe(false);
  });

  it('keeps the repository hooks read-only', async () => {
    const result = await confined(['sh', '-c', 'echo evil > .git/hooks/pre-commit']);
    expect(result.exitCode).not.toBe(0);
    expect(existsSync(join(project.root, '.git/hooks/pre-commit'))).toBe(false);
  });

  it('leaves git working inside (commits write .git)', async () => {
    writeFileSync(join(project.root, 'change.txt'), 'x\n');
    const result = await confined(['git', '-c', 'core.hooksPath=/dev/null', 'commit', '-q', '-am', 'x', '--allow-empty']);
    expect(result.exitCode).toBe(0);
    expect(git(project.root, 'log', '--oneline')).toContain('x');
  });

  it('hides the service process and other processes (own PID namespace)', async () => {
    const result = await confined(['sh', '-c', 'ls /proc | grep -c "^[0-9]"']);
    expect(Number(result.output.trim())).toBeLessThan(5);
  });

  it('cuts the network when SANDBOX_NETWORK is false', async () => {
    const result = await confined(['cat', '/proc/net/dev']);
    const interfaces = result.output.split('\n').slice(2).filter((line) => line.trim() !== '').map((line) => line.split(':')[0]?.trim());
    expect(interfaces).toEqual(['lo']);
  });

  it('kills the whole sandboxed process tree on timeout', async () => {
    const marker = `mada-bwrap-marker-${process.pid}`;
    const result = await confined(['bash', '-c', `(exec -a ${marker} sleep 300) & exec -a ${marker} sleep 300`], 500);
    expect(result.output).toBe('');
    expect(result.stopped).toBe('timeout');
    await new Promise((resolve) => setTimeout(resolve, 300));
    const survivors = readdirProcs().filter((cmdline) => cmdline.includes(marker));
    expect(survivors).toEqual([]);
  });
});

describe('bwrap arguments', () => {
  it('binds the allowed paths writable over a read-only root and shares the network only when asked', () => {
    const args = bwrapArguments({ bwrapPath: '/usr/bin/bwrap', allowedPaths: ['/srv/a'], network: true, cwd: '/srv/a' }, '/usr/bin/ls', ['-l']);
    expect(args.slice(0, 3)).toEqual(['--ro-bind', '/', '/']);
    expect(args).toEqual(expect.arrayContaining(['--bind', '/srv/a', '--share-net', '--unshare-all', '--die-with-parent', '--new-session']));
    expect(args.slice(-5)).toEqual(['--chdir', '/srv/a', '--', '/usr/bin/ls', '-l']);
    const closed = bwrapArguments({ bwrapPath: '/usr/bin/bwrap', allowedPaths: [], network: false, cwd: '/' }, '/usr/bin/ls', []);
    expect(closed).not.toContain('--share-net');
  });

  it('finds the hooks directory of the working repository', () => {
    mkdirSync(join(project.root, 'src', 'deep'), { recursive: true });
    const args = bwrapArguments({ bwrapPath: 'bwrap', allowedPaths: [project.root], network: false, cwd: join(project.root, 'src', 'deep') }, '/bin/true', []);
    const hooks = join(project.root, '.git', 'hooks');
    expect(args.join(' ')).toContain(`--ro-bind ${hooks} ${hooks}`);
  });
});

function readdirProcs(): string[] {
  const out: string[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      out.push(readFileSync(`/proc/${entry}/cmdline`, 'utf8').replaceAll('\0', ' '));
    } catch {
      // Gone meanwhile.
    }
  }
  return out;
}
