import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bwrapArguments, SANDBOX_HOME, type SandboxSpec } from '../../../src/tools/sandbox/bubblewrap.js';
import type { Launcher } from '../../../src/tools/sandbox/exec/run-pipeline.js';
import { toolchainPaths } from '../../../src/tools/sandbox/system-view.js';
import { detectSandbox, isAvailable, SandboxLauncher, type SandboxAvailability } from '../../../src/tools/sandbox/launcher.js';
import { execute, pipeline, run, sequence, testEnv } from './support/invocations.js';
import { createProject, git, type Project } from './support/project.js';

/*
 * These tests need bubblewrap (Debian package `bubblewrap`) able to create namespaces, and
 * util-linux's prlimit. When it cannot, they fail: the OS sandbox is part of the contract.
 */

let project: Project;
let elsewhere: string;
let availability: SandboxAvailability;
let dataDir: string;
let toolchains: string[];

const specFor = (writable: boolean, overrides: Partial<SandboxSpec> = {}): Omit<SandboxSpec, 'cwd'> => ({
  etc: isAvailable(availability) ? availability.etc : '/etc',
  allowedPaths: [project.root],
  writable,
  network: false,
  readOnlyPaths: [join(project.root, '.git', 'hooks'), join(project.root, '.git', 'config')],
  hiddenPaths: [dataDir, join(project.root, '.env')],
  toolchains,
  tmpBytes: 64 * 1024 * 1024,
  ...overrides,
});

function launcherFor(writable: boolean, limits = { memoryMb: 1024, maxProcesses: 64 }): { launcher: Launcher; dispose(): void } {
  if (!isAvailable(availability)) throw new Error(availability.reason);
  const sandbox = new SandboxLauncher(availability, specFor(writable), limits);
  return { launcher: (invocation) => sandbox.launch(invocation.executable, invocation.argv.slice(1), project.root), dispose: () => sandbox.dispose() };
}

async function confined(argv: string[], options: { writable?: boolean; timeoutMs?: number; limits?: { memoryMb: number; maxProcesses: number } } = {}) {
  const { launcher, dispose } = launcherFor(options.writable ?? true, options.limits);
  try {
    return await execute(sequence(pipeline(run(argv))), project.root, { launcher, timeoutMs: options.timeoutMs ?? 20_000 });
  } finally {
    dispose();
  }
}

beforeAll(async () => {
  project = createProject();
  // Outside the allowed paths and outside /tmp (which the sandbox replaces with its own).
  elsewhere = realpathSync(mkdtempSync(join('/var/tmp', 'mada-bwrap-outside-')));
  dataDir = join(project.root, 'data');
  mkdirSync(dataDir);
  writeFileSync(join(dataDir, 'mada.db'), 'database secret\n');
  writeFileSync(join(project.root, '.env'), 'LLM_API_KEY=env-secret\n');
  symlinkSync(dataDir, join(project.root, 'data-link'));
  toolchains = await toolchainPaths(testEnv.PATH as string, [], [project.root]);
  availability = await detectSandbox({ sandboxEnabled: true }, testEnv.PATH);
  if (!isAvailable(availability)) throw new Error(`bubblewrap is required for these tests: ${availability.reason}`);
});

afterAll(() => {
  project.cleanup();
  rmSync(elsewhere, { recursive: true, force: true });
});

describe('sandbox detection', () => {
  it('finds a working bubblewrap on this machine', () => {
    expect(availability.state).toBe('bubblewrap');
  });

  it('reports the sandbox disabled when the setting turns it off', async () => {
    expect(await detectSandbox({ sandboxEnabled: false })).toMatchObject({ state: 'disabled' });
  });

  it('reports the sandbox unavailable when bwrap is not installed', async () => {
    expect(await detectSandbox({ sandboxEnabled: true }, '/nonexistent')).toEqual({ state: 'unavailable', reason: 'bubblewrap (bwrap) is not installed' });
  });
});

describe('what a sandboxed process can see', () => {
  it('sees system programs but not /root, other homes, shadow files or sudoers', async () => {
    const result = await confined(['sh', '-c', 'ls /usr/bin/git; ls -A /root; ls /home; ls /etc/shadow /etc/gshadow /etc/sudoers /etc/ssh /etc/ssl/private; cat /etc/shadow']);
    expect(result.output).toContain('/usr/bin/git');
    expect(result.output).toMatch(/\/etc\/shadow.*No such file/);
    expect(result.output).toMatch(/\/etc\/sudoers.*No such file/);
    expect(result.output).toMatch(/\/etc\/ssl\/private.*No such file/);
    expect(result.output).not.toMatch(/root:[^:]*:\d+:/);
    // Only a toolchain may show under /root (pyenv here); nothing the service user keeps there.
    expect(result.output).not.toMatch(/\.bash_history|\.ssh|\.npmrc|\.gitconfig/);
  });

  it('has an empty private HOME in its private /tmp', async () => {
    const result = await confined(['sh', '-c', 'echo "$HOME"; ls -A "$HOME" | wc -l; echo x > "$HOME/f" && cat "$HOME/f"']);
    expect(result.output).toBe(`${SANDBOX_HOME}\n0\nx\n`);
  });

  it('does not see a directory outside the allowed paths', async () => {
    writeFileSync(join(elsewhere, 'secret.txt'), 'outside secret\n');
    const result = await confined(['cat', join(elsewhere, 'secret.txt')]);
    expect(result.exitCode).not.toBe(0);
    expect(result.output).not.toContain('outside secret');
  });

  it('hides DATA_DIR and the .env inside an allowed path, also through a symlink', async () => {
    const result = await confined(['sh', '-c', 'ls -A data; cat data/mada.db data-link/mada.db .env; echo end']);
    expect(result.output).not.toContain('database secret');
    expect(result.output).not.toContain('env-secret');
    expect(result.output).toContain('end');
  });

  it('cannot write into the hidden DATA_DIR or over the .env', async () => {
    const result = await confined(['sh', '-c', 'echo x > data/planted; echo y > .env; rm -rf data; echo done']);
    expect(result.output).toContain('done');
    expect(existsSync(join(dataDir, 'planted'))).toBe(false);
    expect(readFileSync(join(project.root, '.env'), 'utf8')).toBe('LLM_API_KEY=env-secret\n');
    expect(readFileSync(join(dataDir, 'mada.db'), 'utf8')).toBe('database secret\n');
  });

  it('hides the service and every other process (own PID namespace)', async () => {
    // Variables of this (service) process that children never get: none may show up inside.
    const serviceOnly = readFileSync('/proc/self/environ', 'utf8').split('\0').filter((entry) => entry !== '' && !(entry.split('=')[0] as string in testEnv));
    expect(serviceOnly.length).toBeGreaterThan(0);
    const result = await confined(['sh', '-c', `cat /proc/1/environ; echo; ls /proc | grep -c "^[0-9]"; cat /proc/${process.pid}/environ`]);
    const processes = Number(/^(\d+)$/m.exec(result.output)?.[1]);
    expect(processes).toBeLessThan(5);
    for (const entry of serviceOnly) expect(result.output).not.toContain(entry);
  });

  it('has no controlling terminal to push keystrokes into (TIOCSTI)', async () => {
    const script = 'import fcntl, termios\ntry:\n    fcntl.ioctl(open("/dev/tty", "w"), termios.TIOCSTI, b"x")\n    print("injected")\nexcept OSError as error:\n    print("refused", error.errno)';
    const result = await confined(['python3', '-c', script]);
    expect(result.output).toMatch(/^refused \d+\n$/);
  });

  it('has no network when it is not allowed', async () => {
    const result = await confined(['cat', '/proc/net/dev']);
    const interfaces = result.output.split('\n').slice(2).filter((line) => line.trim() !== '').map((line) => line.split(':')[0]?.trim());
    expect(interfaces).toEqual(['lo']);
  });
});

describe('what a sandboxed process can write', () => {
  it('stops a write outside the allowed paths', async () => {
    const target = join(elsewhere, 'escaped.txt');
    const result = await confined(['sh', '-c', `echo pwned > ${target}`]);
    expect(result.exitCode).not.toBe(0);
    expect(existsSync(target)).toBe(false);
  });

  it('stops writes to system files', async () => {
    const result = await confined(['touch', '/etc/mada-bwrap-test', '/usr/mada-bwrap-test']);
    expect(result.exitCode).not.toBe(0);
    expect(existsSync('/etc/mada-bwrap-test')).toBe(false);
    expect(existsSync('/usr/mada-bwrap-test')).toBe(false);
  });

  it('keeps /tmp private: what is written there never reaches the host', async () => {
    const result = await confined(['sh', '-c', 'echo x > /tmp/inside-sandbox.txt && cat /tmp/inside-sandbox.txt']);
    expect(result).toMatchObject({ exitCode: 0, output: 'x\n' });
    expect(existsSync('/tmp/inside-sandbox.txt')).toBe(false);
  });

  it('writes inside the allowed paths for bash, never for bash_readonly', async () => {
    expect((await confined(['sh', '-c', 'echo kept > kept.txt'])).exitCode).toBe(0);
    expect(readFileSync(join(project.root, 'kept.txt'), 'utf8')).toBe('kept\n');
    const readonly = await confined(['sh', '-c', 'echo lost > lost.txt'], { writable: false });
    expect(readonly.output).toContain('Read-only file system');
    expect(existsSync(join(project.root, 'lost.txt'))).toBe(false);
  });

  it('drops every capability, so nothing read-only can be remounted', async () => {
    const caps = await confined(['sh', '-c', 'grep CapEff /proc/self/status']);
    expect(caps.output).toMatch(/CapEff:\s+0+\n/);
    const remount = await confined(['sh', '-c', `mount -o remount,rw,bind ${project.root}/.git/hooks && touch ${project.root}/.git/hooks/x`]);
    expect(remount.exitCode).not.toBe(0);
    expect(existsSync(join(project.root, '.git/hooks/x'))).toBe(false);
  });

  it('keeps the repository hooks and config read-only', async () => {
    const before = readFileSync(join(project.root, '.git/config'), 'utf8');
    const result = await confined(['sh', '-c', 'echo evil > .git/hooks/pre-commit; echo "[core]" >> .git/config']);
    expect(result.exitCode).not.toBe(0);
    expect(existsSync(join(project.root, '.git/hooks/pre-commit'))).toBe(false);
    expect(readFileSync(join(project.root, '.git/config'), 'utf8')).toBe(before);
  });

  it('leaves git working inside (commits write .git)', async () => {
    writeFileSync(join(project.root, 'change.txt'), 'x\n');
    const result = await confined(['git', 'commit', '-q', '-am', 'inside', '--allow-empty']);
    expect(result.exitCode).toBe(0);
    expect(git(project.root, 'log', '--oneline')).toContain('inside');
  });
});

describe('resource limits', () => {
  it('caps memory: a process cannot allocate past SANDBOX_MEMORY_MB', async () => {
    const result = await confined(['python3', '-c', 'x = bytearray(800 * 1024 * 1024); print("allocated")'], { limits: { memoryMb: 256, maxProcesses: 64 } });
    expect(result.output).toContain('MemoryError');
    expect(result.output).not.toContain('allocated');
  });

  it('caps the number of processes', async () => {
    const script = 'import os, time\nn = 0\ntry:\n    for _ in range(200):\n        if os.fork() == 0:\n            time.sleep(5); os._exit(0)\n        n += 1\nexcept OSError:\n    pass\nprint("forked", n)';
    const result = await confined(['python3', '-c', script], { limits: { memoryMb: 1024, maxProcesses: 20 } });
    expect(result.output).toMatch(/forked \d+/);
    const forked = Number(/forked (\d+)/.exec(result.output)?.[1]);
    expect(forked).toBeLessThan(20);
  });

  it('kills the whole sandboxed process tree on timeout', async () => {
    const marker = `mada-bwrap-marker-${process.pid}`;
    const result = await confined(['bash', '-c', `(exec -a ${marker} sleep 300) & exec -a ${marker} sleep 300`], { timeoutMs: 500 });
    expect(result.stopped).toBe('timeout');
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(processesMatching(marker)).toEqual([]);
  });
  it('ends every process of a sandbox stopped while bubblewrap is still setting it up', async () => {
    // bubblewrap arms the parent-death signal of its PID namespace's init only after the mounts,
    // so a stop that ends the outer bwrap sooner must reach the sandbox by its process group.
    const marker = `mada-bwrap-early-${process.pid}`;
    for (const delayMs of Array.from({ length: 40 }, (_, i) => i % 20)) {
      const controller = new AbortController();
      const { launcher, dispose } = launcherFor(true);
      const running = execute(sequence(pipeline(run(['bash', '-c', `exec -a ${marker} sleep 300`]))), project.root, { launcher, signal: controller.signal });
      setTimeout(() => controller.abort(), delayMs);
      expect((await running).stopped).toBe('abort');
      dispose();
    }
    await expect.poll(() => processesMatching(marker).length, { timeout: 5000 }).toBe(0);
  });
});

describe('bwrap arguments', () => {
  it('builds the view from an allowlist, never from /', () => {
    const args = bwrapArguments({ ...specFor(true), cwd: project.root }, ['/usr/bin/ls', '-l']);
    expect(args.join(' ')).not.toContain('--ro-bind / /');
    expect(args).toEqual(expect.arrayContaining(['--bind', project.root, '--unshare-all', '--cap-drop', 'ALL', '--die-with-parent']));
    // The spawn is already a session of its own; a second one would take the sandbox out of the
    // process group a stop kills.
    expect(args).not.toContain('--new-session');
    expect(args).not.toContain('--share-net');
    expect(args.slice(-5)).toEqual(['--chdir', project.root, '--', '/usr/bin/ls', '-l']);
  });

  it('binds the allowed paths read-only for reading tools and shares the network only when asked', () => {
    const args = bwrapArguments({ ...specFor(false), network: true, cwd: project.root }, ['/bin/true']);
    expect(args.join(' ')).toContain(`--ro-bind ${project.root} ${project.root}`);
    expect(args).toContain('--share-net');
  });

  it('never binds a protected path that is a link to somewhere outside', () => {
    const link = join(project.root, 'hooks-link');
    symlinkSync(elsewhere, link);
    const args = bwrapArguments({ ...specFor(true), readOnlyPaths: [link], cwd: project.root }, ['/bin/true']);
    expect(args).not.toContain(elsewhere);
  });
});

function processesMatching(marker: string): string[] {
  const out: string[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const cmdline = readFileSync(`/proc/${entry}/cmdline`, 'utf8').replaceAll('\0', ' ');
      if (cmdline.includes(marker)) out.push(cmdline);
    } catch {
      // Gone meanwhile.
    }
  }
  return out;
}
