import { spawn } from 'node:child_process';
import { realpathSync } from 'node:fs';
import { once } from 'node:events';
import { isWithin } from '../tools/sandbox/paths.js';
import { SYSTEM_DIRECTORIES } from '../tools/sandbox/system-view.js';
import { SandboxLauncher, type Usable } from '../tools/sandbox/launcher.js';
import { PathChangedError, WorkingDirChangedError } from './errors.js';
import { GIT_TIMEOUT_MS } from './git.js';
import { RESTORE_PROGRAM } from './restore-program.js';
import { treeEntries } from './revert.js';
import type { ShadowRepo } from './shadow-repo.js';
import type { PinnedDir } from './working-dir-pin.js';

/** Where the held working directory appears inside the sandbox. */
const TARGET = '/mada/workdir';
/** The descriptor bwrap inherits it as: the first after stdin, stdout and stderr. */
const BOUND_FD = 3;

export interface RestoreSandbox {
  availability: Usable;
  memoryMb: number;
  maxProcesses: number;
}

/**
 * restore() of revert.ts, run inside the sandbox: a revert writes on the user's behalf after the
 * run and must reach no further than the run did. The one writable directory is the run's working
 * directory, bound through the descriptor the service holds on it, never by path; the
 * rest is the system directories read-only and an empty /tmp. A mistake in a path check below it
 * can then write nowhere else. The program (restore-program.ts) gets the plan and the old
 * contents on stdin, read from the shadow repository here (DATA_DIR stays out of the sandbox).
 */
export async function restoreInSandbox(repo: ShadowRepo, dir: PinnedDir, before: string, paths: readonly string[], sandbox: RestoreSandbox): Promise<void> {
  if (paths.length === 0) return;
  const entries = await treeEntries(repo, before, paths);
  const files = paths.map((path) => {
    const entry = entries.get(path);
    const bytes = Buffer.from(path, 'latin1').toString('base64');
    return entry ? { path: bytes, size: entry.size, executable: entry.mode === '100755' } : { path: bytes };
  });
  // node itself, when it lives outside the system directories the sandbox shows (nvm, /opt).
  const node = realpathSync(process.execPath);
  const outsideSystem = !SYSTEM_DIRECTORIES.some((system) => isWithin(system, node));
  const spec = {
    allowedPaths: [],
    writable: true,
    network: false,
    readOnlyPaths: [],
    hiddenPaths: [],
    toolchains: outsideSystem ? [node] : [],
    tmpBytes: 1024 * 1024,
    boundDirectories: [{ fd: BOUND_FD, target: TARGET }],
  };
  const launcher = new SandboxLauncher(sandbox.availability, spec, { memoryMb: sandbox.memoryMb, maxProcesses: sandbox.maxProcesses });
  try {
    const { file, args } = launcher.launch(node, ['-e', RESTORE_PROGRAM], TARGET);
    const child = spawn(file, args, { stdio: ['pipe', 'pipe', 'pipe', dir.fd], env: {}, detached: true });
    const { stdin, stdout: output, stderr: errors } = child;
    if (!stdin || !output || !errors) throw new Error('the revert in the sandbox could not be started: no pipes');
    const timer = setTimeout(() => killGroup(child.pid), GIT_TIMEOUT_MS);
    let stdout = '';
    let stderr = '';
    output.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
    errors.on('data', (chunk: Buffer) => {
      if (stderr.length < 64 * 1024) stderr += chunk.toString('utf8');
    });
    stdin.on('error', () => undefined); // it may stop before reading everything (refused)
    const closed = once(child, 'close') as Promise<[number | null]>;
    let failure: unknown;
    try {
      await write(stdin, `${JSON.stringify({ top: TARGET, dev: dir.identity.dev, ino: dir.identity.ino, files })}\n`);
      for (const content of await blobs(repo, paths.flatMap((path) => entries.get(path)?.blob ?? []))) await write(stdin, content);
      stdin.end();
    } catch (error) {
      failure = error;
      killGroup(child.pid);
    }
    const [code] = await closed;
    clearTimeout(timer);
    // A program that answered (a refusal stops it before it reads everything) says why.
    if (failure !== undefined && stdout.trim() === '') throw failure;
    settle(code, stdout, stderr, repo.workingDir);
  } finally {
    launcher.dispose();
  }
}

/** The contents of `ids`, in order, from one `git cat-file --batch` (a process per file costs more than the sandbox). */
async function blobs(repo: ShadowRepo, ids: readonly string[]): Promise<Buffer[]> {
  if (ids.length === 0) return [];
  const { stdout } = await repo.git(['cat-file', '--batch'], { input: ids.map((id) => `${id}\n`).join('') });
  const contents: Buffer[] = [];
  let at = 0;
  for (const id of ids) {
    // `<id> blob <size>\n<content>\n` for each.
    const end = stdout.indexOf(0x0a, at);
    const [found, type, size] = stdout.subarray(at, end).toString('latin1').split(' ');
    if (found !== id || type !== 'blob' || size === undefined) throw new Error(`the shadow repository lacks blob ${id}`);
    contents.push(stdout.subarray(end + 1, end + 1 + Number(size)));
    at = end + 1 + Number(size) + 1;
  }
  return contents;
}

/** What the program answered, as the errors the unsandboxed restore throws. */
function settle(code: number | null, stdout: string, stderr: string, workingDir: string): void {
  const answer = stdout.trim();
  if (code === 0 && answer === '{"ok":true}') return;
  if (code === 0 && answer === '{"refused":"pin"}') throw new WorkingDirChangedError(workingDir);
  if (code === 0 && answer.startsWith('{"swapped":')) {
    const { swapped } = JSON.parse(answer) as { swapped: string };
    throw new PathChangedError(Buffer.from(swapped, 'base64').toString('utf8'));
  }
  throw new Error(`the revert in the sandbox failed (${code ?? 'killed'}): ${stderr.trim().split('\n').slice(-3).join(' ')}`);
}

async function write(stream: NodeJS.WritableStream, data: string | Buffer): Promise<void> {
  if (!stream.write(data)) await once(stream, 'drain');
}

function killGroup(pid: number | undefined): void {
  if (pid === undefined) return;
  try {
    process.kill(-pid, 'SIGKILL');
  } catch {
    // already gone
  }
}
