import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Writable } from 'node:stream';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { bashTool } from '../../../src/tools/bash.js';
import type { Launcher } from '../../../src/tools/sandbox/exec/run-pipeline.js';
import type { SandboxStartError } from '../../../src/tools/sandbox/exec/sandbox-start.js';
import { detectSandbox, isAvailable, SandboxLauncher, type Usable } from '../../../src/tools/sandbox/launcher.js';
import { readSandboxStatus } from '../../../src/tools/sandbox/sandbox-status.js';
import { connectUserNetwork } from '../../../src/tools/sandbox/user-network.js';
import { execute, list, locate, pipeline, run, sequence } from './support/invocations.js';
import { createProject, testSettings, toolContext, type Project } from './support/project.js';

/*
 * A sandbox that bubblewrap cannot set up is made for real: a directory the sandbox shows
 * read-only (a toolchain, SANDBOX_READ_PATHS) that is gone when bubblewrap starts, so bubblewrap
 * exits 1 before the command ("Can't find source path"), as it did when its loopback step lost
 * the race with slirp4netns.
 */

let project: Project;
let usable: Usable;
let scratch: string;

beforeAll(async () => {
  const found = await detectSandbox({ sandboxEnabled: true });
  if (!isAvailable(found)) throw new Error(`bubblewrap is required for these tests: ${found.reason}`);
  usable = found;
});

beforeEach(() => {
  project = createProject();
  scratch = realpathSync(mkdtempSync(join(tmpdir(), 'mada-sandbox-start-')));
});

afterEach(() => {
  project.cleanup();
  rmSync(scratch, { recursive: true, force: true });
});

/** A launcher whose sandbox shows `shown` read-only; `beforeLaunch` runs just before each launch (the n-th, from 1). */
function launcherShowing(shown: string, beforeLaunch: (n: number) => void = () => {}): { launcher: Launcher; launches: () => number; dispose(): void } {
  const spec = { allowedPaths: [project.root], writable: true, network: false, readOnlyPaths: [], hiddenPaths: [], toolchains: [shown], tmpBytes: 16 * 1024 * 1024 };
  const sandbox = new SandboxLauncher(usable, spec, { memoryMb: 1024, maxProcesses: 64 });
  let count = 0;
  return {
    launcher: (invocation) => {
      beforeLaunch(++count);
      return sandbox.launch(invocation.executable, invocation.argv.slice(1), project.root, { status: true });
    },
    launches: () => count,
    dispose: () => sandbox.dispose(),
  };
}

/** `sh -c` appending a line to `log`: how many times the command really ran. */
const appendRun = (log: string) => run(['sh', '-c', 'echo ran >> "$0"; echo done', log]);

describe('a sandbox that fails before its command starts', () => {
  it('starts a lone command once more, drops what bubblewrap said, and the command runs exactly once', async () => {
    const shown = join(scratch, 'toolchain');
    const log = join(project.root, 'log.txt');
    // Missing at the first start, there at the second.
    const { launcher, launches, dispose } = launcherShowing(shown, (n) => n === 2 && mkdirSync(shown));
    const retried: SandboxStartError[] = [];
    try {
      const result = await execute(sequence(pipeline(appendRun(log))), project.root, { launcher, onSandboxRetry: (failure) => retried.push(failure) });
      expect(launches()).toBe(2);
      expect(retried.map((failure) => failure.programs)).toEqual([['sh']]);
      expect(result.sandboxFailure).toBeUndefined();
      expect(result.exitCode).toBe(0);
      expect(result.output).toBe('done\n');
      expect(readFileSync(log, 'utf8')).toBe('ran\n');
    } finally {
      dispose();
    }
  });

  it('stops the script with a sandbox failure when the second start fails too: nothing after it runs', async () => {
    const log = join(project.root, 'log.txt');
    const after = join(project.root, 'after.txt');
    const { launcher, launches, dispose } = launcherShowing(join(scratch, 'never-made'));
    try {
      const script = { statements: [...list(pipeline(appendRun(log)), ['||', pipeline(run(['touch', after]))]).statements, ...sequence(pipeline(run(['touch', after]))).statements] };
      const result = await execute(script, project.root, { launcher });
      expect(launches()).toBe(2);
      expect(result.sandboxFailure?.programs).toEqual(['sh']);
      expect(result.sandboxFailure?.attempts).toBe(2);
      // bubblewrap's reason, once (the first attempt's words were dropped).
      expect(result.output.match(/Can't find source path/g)).toHaveLength(1);
      expect(existsSync(log)).toBe(false);
      expect(existsSync(after)).toBe(false);
    } finally {
      dispose();
    }
  });

  it('does not start a command of a longer pipeline again: its neighbours may have run', async () => {
    const { launcher, launches, dispose } = launcherShowing(join(scratch, 'never-made'));
    try {
      const result = await execute(sequence(pipeline(run(['echo', 'hi']), run(['cat']))), project.root, { launcher });
      expect(launches()).toBe(2);
      expect(result.sandboxFailure).toMatchObject({ programs: ['echo', 'cat'], attempts: 1 });
    } finally {
      dispose();
    }
  });

  it("takes a command's own failure for its status, never for the sandbox's", async () => {
    const { launcher, launches, dispose } = launcherShowing(scratch);
    const retried: SandboxStartError[] = [];
    try {
      const result = await execute(sequence(pipeline(run(['rm', 'missing.txt']))), project.root, { launcher, onSandboxRetry: (failure) => retried.push(failure) });
      expect(launches()).toBe(1);
      expect(retried).toEqual([]);
      expect(result.sandboxFailure).toBeUndefined();
      expect(result.exitCode).toBe(1);
      expect(result.output).toContain("rm: cannot remove 'missing.txt'");
    } finally {
      dispose();
    }
  });

  it('tells the agent through bash that the sandbox failed and the command did not run', async () => {
    const shown = join(scratch, 'read-path');
    mkdirSync(shown);
    writeFileSync(join(shown, 'tool'), '');
    const context = toolContext(project, { settings: testSettings({ sandboxReadPaths: [shown] }) });
    const bash = (command: string) => bashTool.execute(bashTool.parameters.parse({ command }), context);
    // The read path is found (and kept) while it exists; it is gone when the next sandbox starts.
    const first = await bash('pwd');
    expect(first.error).toBe('');
    rmSync(shown, { recursive: true });
    const result = await bash('rm notes.txt && touch after.txt');
    expect(result.success).toBe(false);
    expect(result.error).toContain(
      "[sandbox error: bubblewrap failed to set up the sandbox (tried 2 times), so rm did not run, nor anything after it; a fault of the service's host, not of the command]",
    );
    expect(result.error).not.toContain('[exit code:');
    expect(existsSync(join(project.root, 'notes.txt'))).toBe(true);
    expect(existsSync(join(project.root, 'after.txt'))).toBe(false);
  });
});

describe("the sandbox's own network", () => {
  /*
   * slirp4netns --configure brings the namespace's `lo` up, and the kernel then gives it
   * 127.0.0.1; bubblewrap adds that address itself and exits if it is there. slirp4netns was
   * started on the pid bubblewrap reports before setting the sandbox up, so on a busy host it
   * now and then came first and the command never ran. Here bubblewrap is held at that moment for
   * real (--userns-block-fd: it waits after reporting the pid, for its caller to write the user
   * namespace's maps, before the sandbox sets itself up) until someone gives the namespace its
   * loopback address, or for a while: slirp4netns must not be that someone.
   */
  it('is uplinked only after bubblewrap set up its loopback, however long bubblewrap takes to get there', async () => {
    if (usable.slirpPath === undefined) throw new Error(`slirp4netns is required for this test: ${usable.hostNetworkReason ?? ''}`);
    const slirpPath = usable.slirpPath;
    const spec = { allowedPaths: [project.root], writable: true, network: true, readOnlyPaths: [], hiddenPaths: [], toolchains: [], tmpBytes: 16 * 1024 * 1024 };
    const sandbox = new SandboxLauncher(usable, spec, { memoryMb: 1024, maxProcesses: 64 });
    try {
      const launch = sandbox.launch(locate('cat') as string, ['/proc/net/route'], project.root);
      const command = [launch.file, ...launch.args];
      const bwrap = command.indexOf(usable.bwrapPath);
      command.splice(bwrap + 1, 0, '--unshare-user', '--info-fd', '5', '--userns-block-fd', '6');
      const child = spawn(command[0] as string, command.slice(1), { stdio: ['ignore', 'pipe', 'pipe', 'pipe', 'pipe', 'pipe', 'pipe'], detached: true, env: {} });
      let output = '';
      child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
      child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
      const exited = new Promise<number | null>((resolve) => child.once('close', resolve));
      const status = readSandboxStatus(child);
      const up = connectUserNetwork(child, status, slirpPath, () => {});
      const pid = await status.childPid;
      if (pid === undefined) throw new Error(`bubblewrap made no sandbox: ${output}`);
      // Held: the loopback address shows only if something other than bubblewrap put it there.
      const deadline = Date.now() + 2000;
      while (Date.now() < deadline && !readFileSync(`/proc/${pid}/net/fib_trie`, 'latin1').includes('127.0.0.1')) await new Promise((resolve) => setTimeout(resolve, 20));
      const uid = process.getuid?.() ?? 0;
      const gid = process.getgid?.() ?? 0;
      writeFileSync(`/proc/${pid}/uid_map`, `${uid} ${uid} 1\n`);
      writeFileSync(`/proc/${pid}/setgroups`, 'deny');
      writeFileSync(`/proc/${pid}/gid_map`, `${gid} ${gid} 1\n`);
      const hold = child.stdio.at(6) as Writable | null | undefined;
      hold?.end('1');
      expect(await exited, output).toBe(0);
      expect(await up).toBe(true);
      // slirp4netns's default route: the uplink was up before the command ran.
      expect(output).toMatch(/^tap0\s+00000000\s/m);
    } finally {
      sandbox.dispose();
    }
  });
});
