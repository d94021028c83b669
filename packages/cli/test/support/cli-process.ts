import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterAll } from 'vitest';

export const CLI_MAIN = fileURLToPath(new URL('../../src/main.ts', import.meta.url));
/** tsx's loader by absolute URL: children run in temp dirs with no node_modules. */
export const TSX_LOADER = pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href;

/** The command line that runs the client from its TypeScript sources. */
export function cliCommand(args: string[] = []): string[] {
  return [process.execPath, '--conditions=mada-source', '--import', TSX_LOADER, CLI_MAIN, ...args];
}

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

export interface CliRun {
  /** HOME of the child; each test gets its own. */
  home: string;
  env?: Record<string, string>;
  cwd?: string;
  /** Written to stdin, which is then closed. */
  input?: string;
  /** Sends SIGINT once stdout contains this text. */
  interruptWhen?: string;
  timeoutMs?: number;
}

/**
 * The one directory a test file's temp directories are made in, and the service's ALLOWED_PATHS
 * (service.ts). Not the whole temp directory: every other test file, and every suite run beside
 * this one, keeps its repositories there, and the service's repository census takes a repository
 * that appears under its allowed paths during a `bash` command for the command's own (it strips
 * its config of the programs it names, and its hooks).
 */
export const TEST_ROOT = realpathSync(mkdtempSync(join(tmpdir(), 'mada-cli-')));
// The last hook of the file to run (hooks after tests run in reverse): services are stopped by then.
if (process.env.VITEST !== undefined) afterAll(() => rmSync(TEST_ROOT, { recursive: true, force: true }));

export function tempDir(prefix: string): string {
  return realpathSync(mkdtempSync(join(TEST_ROOT, prefix)));
}

/** The child sees only what a user's shell would give it: no MADA_* from the test runner. */
export function childEnv(home: string, extra: Record<string, string> = {}): Record<string, string> {
  return { PATH: process.env.PATH ?? '', HOME: home, LANG: 'C.UTF-8', TZ: 'UTC', ...extra };
}

/** Runs `mada` as a real child process with pipes for stdin, stdout and stderr. */
export async function runMada(args: string[], run: CliRun): Promise<CliResult> {
  const [node, ...rest] = cliCommand(args);
  const child = spawn(node!, rest, { cwd: run.cwd ?? run.home, env: childEnv(run.home, run.env), stdio: ['pipe', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => {
    stdout += chunk.toString();
    if (run.interruptWhen && stdout.includes(run.interruptWhen)) {
      delete run.interruptWhen;
      child.kill('SIGINT');
    }
  });
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  // A chat reads its input as it goes; an early close would end it before the service answers.
  if (run.input !== undefined) child.stdin.end(run.input);
  else child.stdin.end();
  const timer = setTimeout(() => child.kill('SIGKILL'), run.timeoutMs ?? 15_000);
  const [code] = (await once(child, 'exit')) as [number | null];
  clearTimeout(timer);
  return { code, stdout, stderr };
}
