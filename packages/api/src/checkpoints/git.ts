import { spawn } from 'node:child_process';
import { realpathSync } from 'node:fs';
import { releaseFifoWaits } from '../util/fifo-release.js';
import { CONFINED_TREE_FD, CONFINED_WORK_TREE, confinedGit, type ConfinedTree } from './confined-git.js';

/**
 * The one way the service runs git over a working directory: a shadow repository of its own
 * (GIT_DIR under DATA_DIR), the working directory only as GIT_WORK_TREE. System and global config
 * are off and the shadow's config is written by the service, so nothing in the working directory
 * (its `.git/config`, hooks, fsmonitor, attributes filters, textconv drivers) can make git run code.
 */
export interface GitTarget {
  gitDir: string;
  /** Empty for commands that need no working tree (init). */
  workTree: string;
  /** The address space each git process may take (DEFAULT_GIT_MEMORY_BYTES unless given). */
  maxMemoryBytes?: number;
  /**
   * A snapshot's: git runs inside the sandbox and reads the work tree through the directory held
   * open (confined-git.ts), never by `workTree`, which then only names it.
   */
  confined?: ConfinedTree;
}

/**
 * git reads every ignore file it meets whole, whatever its size: a run's `truncate -s 50G
 * .gitignore` (sparse, no disk used) would make the service's own git, which runs outside the
 * sandbox and its memory limit, take all the host's memory at the next snapshot. Capped, git fails
 * (the snapshot fails with the reason) instead. A 16,000-file tree takes git under 20 MB, `gc`
 * of it about 200 MB.
 */
export const DEFAULT_GIT_MEMORY_BYTES = 2 * 1024 * 1024 * 1024;

export interface GitOptions {
  input?: string | Buffer;
  /** Output beyond this many bytes is dropped and git is stopped (`truncated` says so). */
  maxOutputBytes?: number;
}

export interface GitResult {
  stdout: Buffer;
  truncated: boolean;
  /** What git warned about on a command that succeeded (`warning: ` lines, without the prefix). */
  warnings: string[];
}

/** stderr kept per command: enough for a few warnings naming paths near PATH_MAX. */
const MAX_STDERR_CHARS = 64 * 1024;

export class GitError extends Error {
  constructor(args: readonly string[], code: number | null, stderr: string) {
    super(`git ${args[0] ?? ''} failed (${code ?? 'signal'}): ${stderr.trim().split('\n').slice(-3).join(' ')}`);
    this.name = 'GitError';
  }
}

/** Options that switch off every way config or attributes could name a program for git to run. */
const SAFE_CONFIG = [
  '-c', 'core.hooksPath=/dev/null',
  '-c', 'core.fsmonitor=false',
  '-c', 'core.attributesFile=/dev/null',
  '-c', 'core.excludesFile=/dev/null',
  '-c', 'core.sshCommand=false',
  '-c', 'diff.external=',
  '-c', 'gc.auto=0',
  '-c', 'maintenance.auto=false',
  '-c', 'protocol.allow=never',
];

function gitEnvironment(target: GitTarget): NodeJS.ProcessEnv {
  // A minimal environment: no GIT_* variable of the service's own environment leaks in.
  return {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: target.gitDir,
    LC_ALL: 'C',
    GIT_DIR: target.gitDir,
    ...(target.workTree === '' ? {} : { GIT_WORK_TREE: target.confined ? CONFINED_WORK_TREE : target.workTree }),
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_CONFIG_GLOBAL: '/dev/null',
    GIT_ATTR_NOSYSTEM: '1',
    GIT_TERMINAL_PROMPT: '0',
    // Optional locks stay on: `status` writes back the stats it refreshed and its untracked cache,
    // which is what makes the next snapshot cheap. Work on one shadow repository is serialized.
    GIT_AUTHOR_NAME: 'mada',
    GIT_AUTHOR_EMAIL: 'mada@localhost',
    GIT_COMMITTER_NAME: 'mada',
    GIT_COMMITTER_EMAIL: 'mada@localhost',
  };
}

/** The files git reads in a work tree. */
const GIT_READS: ReadonlySet<string> = new Set(['.gitignore', '.gitattributes', '.gitmodules']);

/** Longest a shadow git command may take (a 20,000-file snapshot takes well under a second). */
export const GIT_TIMEOUT_MS = 300_000;

export function runGit(target: GitTarget, args: readonly string[], options: GitOptions = {}): Promise<GitResult> {
  return new Promise((resolve, reject) => {
    const memoryBytes = target.maxMemoryBytes ?? DEFAULT_GIT_MEMORY_BYTES;
    const confined = target.confined && target.workTree !== '' ? target.confined : undefined;
    let launch: Launch;
    try {
      launch = confined ? confinedLaunch(confined, target.gitDir, memoryBytes, args) : plainLaunch(target, memoryBytes, args);
    } catch (error) {
      reject(error);
      return;
    }
    // Its own process group (detached), stopped whole: under the sandbox git is bwrap's grandchild.
    const child = spawn(launch.file, launch.args, { cwd: launch.cwd, env: { ...gitEnvironment(target), ...launch.env }, stdio: launch.stdio, detached: true });
    const stop = (): void => killGroup(child.pid);
    // Whatever the working directory holds, a snapshot must end: a stuck git fails the snapshot, not the run.
    const timer = setTimeout(stop, GIT_TIMEOUT_MS);
    // git opens these work-tree files whatever they are: a FIFO among them would hold it (fifo-release.ts).
    // Under the sandbox they are released in the held directory, through the service's descriptor.
    const fifoTree = confined ? `/proc/self/fd/${confined.dirFd}` : target.workTree;
    const stopWatch = target.workTree === '' ? () => undefined : releaseFifoWaits(child.pid, { tree: fifoTree, names: GIT_READS });
    const { stdin, stdout, stderr: errors } = child;
    if (!stdin || !stdout || !errors) {
      clearTimeout(timer);
      stopWatch();
      stop();
      reject(new Error('git could not be started: no pipes'));
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    let truncated = false;
    let stderr = '';
    stdout.on('data', (chunk: Buffer) => {
      if (truncated) return;
      const limit = options.maxOutputBytes ?? Number.POSITIVE_INFINITY;
      if (size + chunk.length > limit) {
        chunks.push(chunk.subarray(0, limit - size));
        truncated = true;
        stop();
        return;
      }
      chunks.push(chunk);
      size += chunk.length;
    });
    errors.on('data', (chunk: Buffer) => {
      if (stderr.length < MAX_STDERR_CHARS) stderr += chunk.toString('utf8');
    });
    child.on('error', (error) => {
      clearTimeout(timer);
      stopWatch();
      reject(error);
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      stopWatch();
      if (code === 0 || truncated) resolve({ stdout: Buffer.concat(chunks), truncated, warnings: warningsIn(stderr) });
      else reject(new GitError(args, code, stderr));
    });
    stdin.on('error', () => undefined); // git may exit before reading all of its input
    stdin.end(options.input ?? '');
  });
}

/** How one git process is started. */
interface Launch {
  file: string;
  args: string[];
  cwd: string;
  stdio: ('pipe' | number)[];
  /** What differs from gitEnvironment's. */
  env?: NodeJS.ProcessEnv;
}

/**
 * git by the work tree's path: for commands that read no work tree, and snapshots with the sandbox
 * off (SANDBOX_ENABLED=false). `ulimit -v` of the shell that then becomes git (same pid: the
 * timeout and the FIFO watch still see git); where the shell cannot set it (not Linux), git runs
 * without the cap.
 */
function plainLaunch(target: GitTarget, memoryBytes: number, args: readonly string[]): Launch {
  const kib = Math.ceil(memoryBytes / 1024);
  return {
    file: '/bin/sh',
    args: ['-c', `ulimit -v ${kib} 2>/dev/null; exec git "$@"`, 'git', ...SAFE_CONFIG, ...args],
    // Paths given to git are relative to its current directory inside the work tree: its top.
    cwd: target.workTree === '' ? target.gitDir : target.workTree,
    stdio: ['pipe', 'pipe', 'pipe'],
  };
}

/** git inside the sandbox over the held directory, bound as its work tree (and current directory). */
function confinedLaunch(confined: ConfinedTree, gitDir: string, memoryBytes: number, args: readonly string[]): Launch {
  // Bound at its real path, which is how git must name it inside.
  const realGitDir = realpathSync(gitDir);
  const { file, args: launchArgs } = confinedGit(confined, realGitDir, memoryBytes, [...SAFE_CONFIG, ...args]);
  const stdio: ('pipe' | number)[] = ['pipe', 'pipe', 'pipe'];
  stdio[CONFINED_TREE_FD] = confined.dirFd;
  return { file, args: launchArgs, cwd: realGitDir, stdio, env: { GIT_DIR: realGitDir } };
}

function killGroup(pid: number | undefined): void {
  if (pid === undefined) return;
  try {
    process.kill(-pid, 'SIGKILL');
  } catch {
    // already gone
  }
}

const warningsIn = (stderr: string): string[] =>
  stderr
    .split('\n')
    .filter((line) => line.startsWith('warning: '))
    .map((line) => line.slice('warning: '.length));

/**
 * NUL-separated output (`-z`) as its fields, without the empty one after the last NUL. `latin1`
 * keeps every byte of a path that is not UTF-8, so it can be handed back to git or the file system.
 */
export function nulFields(output: Buffer, encoding: 'utf8' | 'latin1' = 'utf8'): string[] {
  const fields = output.toString(encoding).split('\0');
  if (fields.at(-1) === '') fields.pop();
  return fields;
}
