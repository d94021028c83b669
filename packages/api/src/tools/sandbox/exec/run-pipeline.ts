import { spawn, type StdioNull, type StdioPipe } from 'node:child_process';
import { closeSync, writeSync } from 'node:fs';
import { constants } from 'node:os';
import type { Invocation } from '../command-policy/index.js';
import { runType, type BuiltinResult } from './builtin-type.js';
import { planDescriptors, type FdTarget, type FdTargets } from './fd-plan.js';
import { openTarget } from './open-target.js';
import type { PipeEnds, PipeFactory } from './os-pipe.js';
import type { OutputCollector } from './output-collector.js';
import type { ProcessGroups } from './process-groups.js';
import { connectUserNetwork } from '../user-network.js';

/** How an invocation is started: directly, or wrapped (bubblewrap). */
export type Launcher = (invocation: Invocation & { executable: string }) => { file: string; args: string[]; argv0?: string; userNetwork?: string };

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
}

type Stdio = StdioNull | StdioPipe | number;

const statusOf = (code: number | null, signal: NodeJS.Signals | null): number =>
  code ?? 128 + (signal === null ? 0 : (constants.signals[signal] ?? 0));

interface Started {
  exit: Promise<number>;
  closed: Promise<void>;
  pid?: number;
  streams: { destroy(): void }[];
}

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

  async run(): Promise<number> {
    const started: Started[] = [];
    try {
      for (let i = 0; i + 1 < this.invocations.length; i++) {
        const pipe = this.targets[i + 1]?.[0].kind === 'previous' ? await this.ctx.pipes.create() : undefined;
        this.pipes[i] = pipe;
        if (pipe !== undefined) this.held.push(pipe.read, pipe.write);
      }
      this.invocations.forEach((_, i) => started.push(this.start(i)));
    } finally {
      // Once the children hold their ends, the service's copies must go, or readers never see EOF.
      for (const fd of this.held) closeSync(fd);
    }
    const statuses = await Promise.all(started.map((s) => s.exit));
    this.ctx.groups.killAll(started.flatMap((s) => (s.pid === undefined ? [] : [s.pid])));
    await Promise.race([Promise.all(started.map((s) => s.closed)), delay(this.ctx.flushMs)]);
    for (const s of started) for (const stream of s.streams) stream.destroy();
    return statuses[statuses.length - 1] ?? 0;
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
      // bubblewrap's --info-fd and --block-fd when the sandbox gets a network of its own.
      stdio: launch.userNetwork === undefined ? stdio : [...stdio, 'pipe', 'pipe'],
      detached: true,
      ...(launch.argv0 === undefined ? {} : { argv0: launch.argv0 }),
    });
    if (child.pid !== undefined) this.ctx.groups.add(child.pid);
    // Not awaited: bubblewrap waits on its block fd until the uplink is up (or given up on), so the
    // command cannot start early. It never rejects: any failure releases the command without a network.
    if (launch.userNetwork !== undefined) void connectUserNetwork(child, launch.userNetwork, (pid) => this.ctx.groups.add(pid));
    if (fds[0].kind === 'text' && child.stdin) {
      child.stdin.on('error', () => {});
      child.stdin.end(fds[0].text);
    }
    if (fds[1].kind === 'output' && child.stdout) this.ctx.collector.drain(child.stdout);
    if (fds[2].kind === 'output' && child.stderr) this.ctx.collector.drain(child.stderr);
    const exit = new Promise<number>((resolve) => {
      child.once('exit', (code, signal) => resolve(statusOf(code, signal)));
      child.once('error', (error) => {
        this.ctx.collector.add(`${invocation.program}: ${error.message}\n`);
        resolve(127);
      });
    });
    const closed = new Promise<void>((resolve) => {
      child.once('close', () => resolve());
      child.once('error', () => resolve());
    });
    const streams = [child.stdout, child.stderr].filter((s) => s !== null);
    return { exit, closed, streams, ...(child.pid === undefined ? {} : { pid: child.pid }) };
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
    return { exit: Promise.resolve(result.status), closed: Promise.resolve(), streams: [] };
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
