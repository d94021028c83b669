import { spawn, type StdioNull, type StdioPipe } from 'node:child_process';
import { feedArguments, sandboxStdio } from '../sandbox-stdio.js';
import { closeSync, writeSync } from 'node:fs';
import { constants } from 'node:os';
import type { Invocation } from '../command-policy/index.js';
import { runType, type BuiltinResult } from './builtin-type.js';
import { planDescriptors, type FdTarget, type FdTargets } from './fd-plan.js';
import { openTarget } from './open-target.js';
import type { PipeEnds, PipeFactory } from './os-pipe.js';
import type { OutputCollector } from './output-collector.js';
import type { ProcessGroups } from './process-groups.js';
import { readSandboxStatus } from '../sandbox-status.js';
import { connectUserNetwork } from '../user-network.js';
import { failedBeforeStart, SandboxStartError } from './sandbox-start.js';

/**
 * How an invocation is started: directly, or wrapped (bubblewrap). `status`: bubblewrap reports on
 * a pipe at STATUS_FD whether it started the command; `userNetwork` (always with `status`): the
 * slirp4netns that uplinks the sandbox, which waits on a pipe at BLOCK_FD until then.
 */
export type Launcher = (invocation: Invocation & { executable: string }) => {
  file: string;
  args: string[];
  argv0?: string;
  status?: true;
  userNetwork?: string;
  /** bubblewrap's `--args` bytes, fed on a pipe at ARGS_FD (sandbox-stdio.ts). */
  argumentBytes?: Buffer;
  /** bubblewrap's `--seccomp` program, fed on a pipe at SECCOMP_FD (sandbox-stdio.ts). */
  seccomp?: Buffer;
};

export const directLauncher: Launcher = (invocation) => ({
  file: invocation.executable,
  args: invocation.argv.slice(1),
  argv0: invocation.argv[0] as string,
});

export interface PipelineContext {
  cwd: string;
  env: Record<string, string>;
  collector: OutputCollector;
  groups: ProcessGroups;
  launcher: Launcher;
  pipes: PipeFactory;
  locate(name: string): string | undefined;
  /** How long to wait for output after the processes exited. */
  flushMs: number;
  onSandboxRetry(failure: SandboxStartError): void;
  /** Told every command's exit status once its pipeline attempt has ended. */
  onStatuses(statuses: readonly number[]): void;
}

type Stdio = StdioNull | StdioPipe | number;

const statusOf = (code: number | null, signal: NodeJS.Signals | null): number =>
  code ?? 128 + (signal === null ? 0 : (constants.signals[signal] ?? 0));

interface Started {
  exit: Promise<number>;
  closed: Promise<void>;
  pid?: number;
  streams: { destroy(): void }[];
  /** The sandbox ended before its command started (sandbox-start.ts). */
  failedBeforeStart: Promise<boolean>;
}

/** Targets a second attempt cannot reproduce: a pipe to a neighbour already fed or drained, a file appended to. */
const repeatable = (targets: FdTargets): boolean =>
  targets.every((target) => target.kind !== 'previous' && target.kind !== 'next' && !(target.kind === 'file' && target.mode === 'append'));

const delay = (ms: number): Promise<void> =>
  new Promise((resolve) => {
    setTimeout(resolve, ms).unref();
  });

/**
 * Runs one pipeline without a shell: each command in its own process group, joined by kernel
 * pipes, with redirections opened by the service. Resolves to the last command's status.
 */
export class PipelineRun {
  private readonly targets: FdTargets[];
  /** pipes[i] joins command i to command i + 1 (when i + 1 reads its stdin from the pipeline). */
  private readonly pipes: (PipeEnds | undefined)[] = [];
  /** Descriptors the service holds until every command has started. */
  private readonly held: number[] = [];

  constructor(
    private readonly invocations: Invocation[],
    private readonly ctx: PipelineContext,
  ) {
    this.targets = invocations.map((inv, i) => planDescriptors(inv.redirections, i === 0, i === invocations.length - 1));
  }

  /**
   * A command whose sandbox failed before the command started is started once more when nothing
   * else could have seen the attempt (a pipeline of one command, no file appended to); what the
   * failed sandbox printed is dropped. A sandbox that fails again, or cannot be retried, stops
   * the script with SandboxStartError rather than pass bubblewrap's status off as the command's.
   */
  async run(): Promise<number> {
    const mark = this.ctx.collector.mark();
    let attempt = await this.attempt();
    let attempts = 1;
    if (attempt.failed.length > 0 && !this.ctx.groups.stopped && this.invocations.length === 1 && repeatable(this.targets[0] as FdTargets)) {
      this.ctx.collector.rollback(mark);
      this.ctx.onSandboxRetry(new SandboxStartError(attempt.failed, attempts));
      attempt = await this.attempt();
      attempts++;
    }
    if (attempt.failed.length > 0 && !this.ctx.groups.stopped) throw new SandboxStartError(attempt.failed, attempts);
    return attempt.status;
  }

  /** Starts every command of the pipeline once; the last one's status and the programs whose sandbox failed to start. */
  private async attempt(): Promise<{ status: number; failed: string[] }> {
    const started: Started[] = [];
    this.pipes.length = 0;
    try {
      for (let i = 0; i + 1 < this.invocations.length; i++) {
        const pipe = this.targets[i + 1]?.[0].kind === 'previous' ? await this.ctx.pipes.create() : undefined;
        this.pipes[i] = pipe;
        if (pipe !== undefined) this.held.push(pipe.read, pipe.write);
      }
      this.invocations.forEach((_, i) => started.push(this.start(i)));
    } finally {
      // Once the children hold their ends, the service's copies must go, or readers never see EOF.
      for (const fd of this.held.splice(0)) closeSync(fd);
    }
    const statuses = await Promise.all(started.map((s) => s.exit));
    this.ctx.onStatuses(statuses);
    this.ctx.groups.killAll(started.flatMap((s) => (s.pid === undefined ? [] : [s.pid])));
    await Promise.race([Promise.all(started.map((s) => s.closed)), delay(this.ctx.flushMs)]);
    for (const s of started) for (const stream of s.streams) stream.destroy();
    const failedBefore = await Promise.all(started.map((s) => s.failedBeforeStart));
    const failed = this.invocations.filter((_, i) => failedBefore[i] === true).map((invocation) => invocation.program);
    return { status: statuses[statuses.length - 1] ?? 0, failed };
  }

  private start(i: number): Started {
    const invocation = this.invocations[i] as Invocation;
    if (this.ctx.groups.stopped) return this.answer(i, { stdout: '', stderr: '', status: 130 });
    if (invocation.executable === 'builtin') return this.answer(i, runType(invocation.argv, (name) => this.ctx.locate(name)));
    if (invocation.executable === undefined) return this.answer(i, { stdout: '', stderr: `${invocation.program}: command not found\n`, status: 127 });
    let stdio: Stdio[];
    try {
      stdio = (this.targets[i] as FdTargets).map((target, fd) => this.stdioFor(target, fd, i));
    } catch (error) {
      return this.answer(i, { stdout: '', stderr: `${invocation.program}: ${(error as Error).message}\n`, status: 1 });
    }
    return this.spawnChild(i, { ...invocation, executable: invocation.executable }, stdio);
  }

  private spawnChild(i: number, invocation: Invocation & { executable: string }, stdio: Stdio[]): Started {
    const fds = this.targets[i] as FdTargets;
    const launch = this.ctx.launcher(invocation);
    const child = spawn(launch.file, launch.args, {
      cwd: this.ctx.cwd,
      env: this.ctx.env,
      stdio: [...stdio, ...sandboxStdio(launch)],
      detached: true,
      ...(launch.argv0 === undefined ? {} : { argv0: launch.argv0 }),
    });
    if (child.pid !== undefined) this.ctx.groups.add(child.pid);
    feedArguments(child, launch);
    const status = launch.status === true ? readSandboxStatus(child) : undefined;
    // Not awaited: bubblewrap waits on its block fd until the uplink is up (or given up on), so the
    // command cannot start early. It never rejects: any failure releases the command without a network.
    if (launch.userNetwork !== undefined && status !== undefined) void connectUserNetwork(child, status, launch.userNetwork, (pid) => this.ctx.groups.add(pid));
    if (fds[0].kind === 'text' && child.stdin) {
      child.stdin.on('error', () => {});
      child.stdin.end(fds[0].text);
    }
    if (fds[1].kind === 'output' && child.stdout) this.ctx.collector.drain(child.stdout);
    if (fds[2].kind === 'output' && child.stderr) this.ctx.collector.drain(child.stderr);
    // A spawn error (no code, no signal) is answered as bash answers a program it cannot run.
    const ended = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
      child.once('exit', (code, signal) => resolve({ code, signal }));
      child.once('error', (error) => {
        this.ctx.collector.add(`${invocation.program}: ${error.message}\n`);
        resolve({ code: null, signal: null });
      });
    });
    const closed = new Promise<void>((resolve) => {
      child.once('close', () => resolve());
      child.once('error', () => resolve());
    });
    if (status !== undefined && child.pid !== undefined) this.ctx.groups.sandbox(child.pid, status.childPid, ended);
    const streams = [child.stdout, child.stderr].filter((s) => s !== null);
    return {
      exit: ended.then(({ code, signal }) => (code === null && signal === null ? 127 : statusOf(code, signal))),
      closed,
      streams,
      failedBeforeStart: failedBeforeStart(status, ended),
      ...(child.pid === undefined ? {} : { pid: child.pid }),
    };
  }

  private stdioFor(target: FdTarget, fd: number, i: number): Stdio {
    switch (target.kind) {
      case 'null':
        return 'ignore';
      case 'previous':
        return fd === 0 ? (this.pipes[i - 1]?.read ?? 'ignore') : 'ignore';
      case 'next':
        return fd === 0 ? 'ignore' : (this.pipes[i]?.write ?? 'ignore');
      case 'text':
        return fd === 0 ? 'pipe' : 'ignore';
      case 'output':
        return fd === 0 ? 'ignore' : 'pipe';
      case 'file': {
        const opened = openTarget(target.path, target.mode);
        this.held.push(opened);
        return opened;
      }
    }
  }

  /** A command answered without a process: `type`, a program that is not installed, or one not started. */
  private answer(i: number, result: BuiltinResult): Started {
    const fds = this.targets[i] as FdTargets;
    this.writeTo(fds[1], result.stdout, i);
    this.writeTo(fds[2], result.stderr, i);
    return { exit: Promise.resolve(result.status), closed: Promise.resolve(), streams: [], failedBeforeStart: Promise.resolve(false) };
  }

  private writeTo(target: FdTarget, text: string, i: number): void {
    if (text === '') return;
    try {
      if (target.kind === 'output') this.ctx.collector.add(text);
      if (target.kind === 'next' && this.pipes[i] !== undefined) writeSync(this.pipes[i].write, text);
      if (target.kind === 'file' && target.mode !== 'read') writeTextTo(target.path, target.mode, text);
    } catch (error) {
      this.ctx.collector.add(`${(error as Error).message}\n`);
    }
  }
}

function writeTextTo(path: string, mode: 'write' | 'append', text: string): void {
  const fd = openTarget(path, mode);
  try {
    writeSync(fd, text);
  } finally {
    closeSync(fd);
  }
}
