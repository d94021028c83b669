import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterAll, expect } from 'vitest';
import { sweepProcessDirs } from '../../src/util/process-dir.js';

const MAIN = fileURLToPath(new URL('../../src/main.ts', import.meta.url));
/** The entry point `npm start` runs: the TypeScript compiler's output (`npm run build`). */
export const BUILT_MAIN = fileURLToPath(new URL('../../dist/main.js', import.meta.url));
/** tsx's loader by absolute URL: the child's cwd is a temp dir with no node_modules. */
export const TSX = pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href;

export interface ServiceProcess {
  child: ChildProcess;
  url: string;
  output: () => string;
  exited: Promise<number | null>;
}

/** Every service a test file started that has not exited yet. */
const running = new Set<ChildProcess>();
/** Each service's exit, with the clean-up after it: awaited when the file ends. */
const ending = new Set<Promise<void>>();
// A test that times out never reaches its own clean-up, and its service would outlive the suite
// (killed only by the suite's leftover check): the file's end stops whatever is still running.
if (process.env.VITEST !== undefined) {
  afterAll(async () => {
    for (const child of running) child.kill('SIGKILL');
    await Promise.all(ending);
  });
}

/**
 * The service's process directory (its staged /etc, its pipes), once it has exited: a service
 * killed with SIGKILL cannot remove it, and the sweep of the next service to start comes too late
 * for the last one of the suite. Only directories of processes that are gone are removed.
 */
async function sweepAfter(exited: Promise<unknown>): Promise<void> {
  // A child that could not start emits 'error' instead: nothing of its own to sweep then either.
  await exited.catch(() => undefined);
  await sweepProcessDirs(tmpdir()).catch(() => []);
}

/** TMPDIR as this process has it, for a child started with a clean environment. */
export const tempEnv = (): Record<string, string> => (process.env.TMPDIR === undefined ? {} : { TMPDIR: process.env.TMPDIR });

/**
 * Runs the real service entry point as a child process: TypeScript through tsx, or with `built`
 * the compiled service as `npm start` runs it (the caller builds it first).
 */
export function spawnService(env: Record<string, string>, cwd: string, options: { built?: boolean } = {}): ChildProcess {
  const args = options.built ? [BUILT_MAIN] : ['--conditions=mada-source', '--import', TSX, MAIN];
  const child = spawn(process.execPath, args, {
    cwd,
    // The test's TMPDIR (the suite's own, checked at its end for leftovers) rather than /tmp.
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...tempEnv(), PORT: '0', LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  running.add(child);
  const done = sweepAfter(once(child, 'exit')).finally(() => {
    running.delete(child);
    ending.delete(done);
  });
  ending.add(done);
  return child;
}

/** Starts the service and resolves once it listens, with the address it logged. */
export async function startService(env: Record<string, string>, cwd: string, options: { built?: boolean } = {}): Promise<ServiceProcess> {
  const child = spawnService(env, cwd, options);
  let text = '';
  const exited = once(child, 'exit').then(([code]) => code as number | null);
  let listening: string | undefined;
  const url = await new Promise<string>((resolve, reject) => {
    const onData = (chunk: Buffer) => {
      text += chunk.toString();
      // Searched only until found: a busy service logs megabytes, and rescanning them all is quadratic.
      listening ??= /Server listening at (http:\/\/127\.0\.0\.1:\d+)/.exec(text)?.[1];
      if (listening) resolve(listening);
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onData);
    // Settles at most once with the promise above: an exit after listening rejects nothing.
    void exited.then((code) => reject(new Error(`service exited with ${code} before listening:\n${text}`)));
  });
  return { child, url, output: () => text, exited };
}

/** Runs the service to completion (for start-up refusals): exit code and everything it printed. */
export async function runServiceToExit(env: Record<string, string>, cwd: string, limitMs = 60_000): Promise<{ code: number | null; stderr: string }> {
  const child = spawnService(env, cwd);
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  // A service that starts when the test expects a refusal is ended here, not left listening.
  const deadline = setTimeout(() => child.kill('SIGKILL'), limitMs);
  try {
    const [code] = await once(child, 'exit');
    return { code: code as number | null, stderr };
  } finally {
    clearTimeout(deadline);
  }
}

/** Milliseconds from sending GET /health to having its whole answer (a stalled service gets 30 s). */
export async function timeHealth(url: string): Promise<number> {
  const started = performance.now();
  const response = await fetch(`${url}/health`, { signal: AbortSignal.timeout(30_000) });
  await response.json();
  expect(response.status).toBe(200);
  return performance.now() - started;
}
