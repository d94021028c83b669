import { execFileSync } from 'node:child_process';
import { chmodSync } from 'node:fs';
import { mkdir, mkdtemp, realpath, rm, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { PathSandbox } from '../../src/tools/sandbox/paths.js';
import type { ToolContext, ToolSettings } from '../../src/tools/tool.js';
import { createToolHost } from '../../src/tools/tool-host.js';

/** One per test file, as one per service: the sandbox is probed once, not on every call, and one gitlink guard remembers. */
const host = createToolHost();

export const testSettings: ToolSettings = {
  toolTimeoutSeconds: 120,
  sandboxEnabled: true,
  sandboxNetwork: true,
  sandboxMemoryMb: 2048,
  sandboxMaxProcesses: 256,
  sandboxMaxFileMb: 1024,
  // A floor the host's disk keeps whatever else runs on it; disk-floor tests set their own.
  sandboxMinFreeMb: 1,
  sandboxMinFreePercent: 0,
  sandboxMinFreeInodes: 0,
  dataDir: tmpdir(),
  sandboxReadPaths: [],
  allowedPaths: [],
  workspacesDir: '',
  maxWriteBytes: 10_485_760,
  searchEngineUrl: 'http://127.0.0.1:9',
  searchEngineTimeout: 10,
  retryMaxAttempts: 3,
  retryBaseDelay: 1,
  retryMaxDelay: 30,
};

/**
 * A temporary directory holding `allowed/` (the sandbox root and working directory) next to
 * `outside/` (a place tools must never reach), with real files written by the test.
 */
export interface Workspace {
  /** The sandbox root, a real path. */
  root: string;
  /** A directory outside the sandbox, holding `secret.txt`. */
  outside: string;
  /** An absolute path below the sandbox root. */
  path(...parts: string[]): string;
  /** Writes a file below the root (parents created) and returns its absolute path. */
  write(relative: string, content: string | Buffer, mtimeSeconds?: number): Promise<string>;
  context(overrides?: Omit<Partial<ToolContext>, 'settings'> & { settings?: Partial<ToolSettings> }): ToolContext;
  remove(): Promise<void>;
}

export async function createWorkspace(): Promise<Workspace> {
  const base = await realpath(await mkdtemp(join(tmpdir(), 'mada-tools-')));
  const root = join(base, 'allowed');
  const outside = join(base, 'outside');
  await mkdir(root);
  await mkdir(outside);
  await writeFile(join(outside, 'secret.txt'), 'top secret\n');
  const sandbox = new PathSandbox([root]);
  return {
    root,
    outside,
    path: (...parts) => join(root, ...parts),
    async write(relative, content, mtimeSeconds) {
      const path = join(root, relative);
      await mkdir(dirname(path), { recursive: true });
      await writeFile(path, content);
      if (mtimeSeconds !== undefined) await utimes(path, mtimeSeconds, mtimeSeconds);
      return path;
    },
    context: ({ settings, ...rest } = {}) => ({
      workingDir: root,
      sandbox,
      settings: { ...testSettings, ...settings },
      host,
      signal: new AbortController().signal,
      ...rest,
    }),
    remove: () => rm(base, { recursive: true, force: true }),
  };
}

/**
 * Makes `path` unwritable for this process: read-only mode for an ordinary user, the immutable
 * attribute for root (which ignores modes). Returns the undo.
 */
export function lockAgainstWriting(path: string): () => void {
  if (process.getuid?.() !== 0) {
    chmodSync(path, 0o444);
    return () => chmodSync(path, 0o644);
  }
  execFileSync('chattr', ['+i', path]);
  return () => execFileSync('chattr', ['-i', path]);
}
