import { createHash } from 'node:crypto';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { bashTool } from '../../../../src/tools/bash.js';
import { bashReadonlyTool } from '../../../../src/tools/bash-readonly.js';
import { editFileTool } from '../../../../src/tools/edit-file.js';
import { globFilesTool } from '../../../../src/tools/glob-files.js';
import { grepContentTool } from '../../../../src/tools/grep-content.js';
import { readFileTool } from '../../../../src/tools/read-file.js';
import { PathSandbox } from '../../../../src/tools/sandbox/paths.js';
import type { Tool, ToolResult, ToolSettings } from '../../../../src/tools/tool.js';
import { writeFileTool } from '../../../../src/tools/write-file.js';
import { testEnv } from '../support/invocations.js';
import { createProject, testSettings, testToolHost, type Project } from '../support/project.js';

/** Marks every process a case starts on purpose, so one left behind can be found. */
export const MARKER = `mada-redteam-${process.pid}`;
/** Canaries a hostile command tries to create on the host. */
export const HOST_CANARIES = [`/tmp/${MARKER}-pwned`, `/var/tmp/${MARKER}-pwned`];
/** Planted where only the service user can read: the sandbox must not show it. */
export const ROOT_CANARY = join('/root', `.${MARKER}-secret`);

/** Python run by `bash` (one `-c` program; the policy refuses `$` and backslash-newline, not newlines). */
export const python = (code: string): Record<string, unknown> => ({ command: `python3 -c "${code}"` });

/** ctypes prelude: libc with errno, for the system calls no Python module offers. */
export const LIBC = 'import ctypes, os\nlibc = ctypes.CDLL(None, use_errno=True)\n';

export const SECRETS = {
  outside: 'top secret',
  database: 'database secret text',
  env: 'LLM_API_KEY=env-secret-value',
  root: 'root home secret text',
  keyring: 'kernel keyring secret text',
};

/** A hostile repository: the project of support/project.ts plus the service's DATA_DIR and .env inside it. */
export interface Arena {
  project: Project;
  root: string;
  outside: string;
  dataDir: string;
  envFile: string;
  sandbox: PathSandbox;
  /** Writes a file below the project (parents made). */
  plant(relative: string, content: string, mode?: number): string;
}

/** Built once per file: copying it is much cheaper than running git and python for every case. */
export const createTemplate = (): Project => createProject();

function copyProject(template: Project): Project {
  const base = realpathSync(mkdtempSync(join(tmpdir(), 'mada-redteam-')));
  cpSync(template.base, base, { recursive: true, verbatimSymlinks: true });
  const root = join(base, 'project');
  return { base, root, outside: join(base, 'outside'), sandbox: new PathSandbox([root]), cleanup: () => rmSync(base, { recursive: true, force: true }) };
}

export function createArena(template: Project): Arena {
  const project = copyProject(template);
  const dataDir = join(project.root, 'data');
  const envFile = join(project.root, '.env');
  mkdirSync(dataDir);
  writeFileSync(join(dataDir, 'mada.db'), `SQLite format 3\n${SECRETS.database}\n`);
  writeFileSync(envFile, `${SECRETS.env}\n`);
  const sandbox = new PathSandbox([project.root], [envFile], [dataDir, envFile]);
  return {
    project,
    root: project.root,
    outside: project.outside,
    dataDir,
    envFile,
    sandbox,
    plant(relative, content, mode) {
      const path = join(project.root, relative);
      mkdirSync(join(path, '..'), { recursive: true });
      writeFileSync(path, content, mode === undefined ? {} : { mode });
      return path;
    },
  };
}

export type ToolName = 'bash_readonly' | 'bash' | 'read_file' | 'write_file' | 'edit_file' | 'glob_files' | 'grep_content';

const TOOLS: Record<ToolName, Tool> = {
  bash_readonly: bashReadonlyTool as unknown as Tool,
  bash: bashTool as unknown as Tool,
  read_file: readFileTool as unknown as Tool,
  write_file: writeFileTool as unknown as Tool,
  edit_file: editFileTool as unknown as Tool,
  glob_files: globFilesTool as unknown as Tool,
  grep_content: grepContentTool as unknown as Tool,
};

export async function callTool(
  arena: Arena,
  tool: ToolName,
  args: Record<string, unknown>,
  settings: Partial<ToolSettings> = {},
): Promise<ToolResult> {
  const chosen = TOOLS[tool];
  return chosen.execute(chosen.parameters.parse(args), {
    workingDir: arena.root,
    sandbox: arena.sandbox,
    settings: testSettings(settings),
    host: testToolHost,
    signal: new AbortController().signal,
  });
}

/** A fingerprint of everything that must not change: git config and hooks, .gitmodules, .env, the database. */
export function protectedFingerprint(arena: Arena): string {
  const hash = createHash('sha256');
  const add = (path: string): void => {
    hash.update(path);
    if (!existsSync(path)) return;
    try {
      hash.update(readFileSync(path));
    } catch {
      for (const name of readdirSync(path).sort()) add(join(path, name));
    }
  };
  for (const path of ['.git/config', '.git/hooks', '.git/commondir', '.gitmodules', '.env', 'data']) add(join(arena.root, path));
  return hash.digest('hex');
}

/** Lines of the host's shadow file, if any: none may ever show up in a tool result. */
export function shadowLines(): string[] {
  try {
    return readFileSync('/etc/shadow', 'utf8').split('\n').filter((line) => /^[^:]+:[^:*!]{8,}/.test(line));
  } catch {
    return [];
  }
}

/** Environment entries this process has and no child gets (the service's settings and keys). */
export function serviceOnlyEnvironment(): string[] {
  return readFileSync('/proc/self/environ', 'utf8')
    .split('\0')
    .filter((entry) => entry.length > 12 && !((entry.split('=')[0] as string) in testEnv));
}

export function processesWithMarker(): string[] {
  const found: string[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    try {
      const cmdline = readFileSync(`/proc/${entry}/cmdline`, 'utf8');
      const state = /^State:\s+(\S)/m.exec(readFileSync(`/proc/${entry}/status`, 'utf8'))?.[1];
      if (cmdline.includes(MARKER) && state !== 'Z') found.push(`${entry}: ${cmdline.replaceAll('\0', ' ')}`);
    } catch {
      // Gone meanwhile.
    }
  }
  return found;
}

/** Polls for a short while: a SIGKILL lands asynchronously. */
export async function survivors(): Promise<string[]> {
  let left = processesWithMarker();
  for (let i = 0; i < 20 && left.length > 0; i++) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    left = processesWithMarker();
  }
  return left;
}

export function removeHostCanaries(): void {
  for (const path of HOST_CANARIES) rmSync(path, { force: true, recursive: true });
}

/** How often the event loop's delay is sampled, in milliseconds. */
const SAMPLE_MS = 10;

/**
 * CPU time this process's main thread (the event loop's) has used, in milliseconds, from
 * /proc: a stall the loop caused by running cannot be longer than the time it ran.
 */
function mainThreadCpuMs(): number {
  const stat = readFileSync(`/proc/self/task/${process.pid}/stat`, 'latin1');
  // Fields after the command name in parentheses (which may hold spaces): utime and stime are 14 and 15.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLOCK_TICKS_PER_SECOND;
}
/** Linux reports thread CPU time in USER_HZ ticks, 100 a second on every architecture Node runs on. */
const CLOCK_TICKS_PER_SECOND = 100;

/**
 * Runs `work` while sampling this process's event loop (where the tools run, as in the service):
 * its result and the longest the loop was held meanwhile, in milliseconds. On a machine whose
 * cores are shared, a process waiting for one looks stalled too, so each delay between two ticks
 * counts only as far as the loop's thread ran during it: a loop that computes or parses accrues
 * that time, one waiting for a core does not. `longestDelayMs` is the delay as
 * `monitorEventLoopDelay` saw it, scheduling included.
 */
export async function sampleEventLoop<T>(work: () => Promise<T>): Promise<{ value: T; longestStallMs: number; longestDelayMs: number }> {
  const delay = monitorEventLoopDelay({ resolution: SAMPLE_MS });
  let longestStallMs = 0;
  let last = { at: performance.now(), cpu: mainThreadCpuMs() };
  const tick = (): void => {
    const now = { at: performance.now(), cpu: mainThreadCpuMs() };
    longestStallMs = Math.max(longestStallMs, Math.min(now.at - last.at - SAMPLE_MS, now.cpu - last.cpu));
    last = now;
  };
  const ticker = setInterval(tick, SAMPLE_MS);
  delay.enable();
  try {
    const value = await work();
    // One more turn of the loop, so a stall at the very end is sampled too.
    await new Promise((resolve) => setTimeout(resolve, SAMPLE_MS * 2));
    tick();
    // Each sample is the time between two ticks: the interval itself is not a stall.
    return { value, longestStallMs, longestDelayMs: Math.max(0, delay.max / 1e6 - SAMPLE_MS) };
  } finally {
    clearInterval(ticker);
    delay.disable();
  }
}
