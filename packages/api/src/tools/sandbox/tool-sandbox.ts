import type { ToolContext, ToolSettings } from '../tool.js';
import type { SandboxSpec } from './bubblewrap.js';
import { isAvailable, SandboxLauncher, type SandboxAvailability } from './launcher.js';
import { isUtf8 } from 'node:buffer';
import { bytePath, pathBytes } from '../../util/byte-path.js';
import { protectedGitPathBytes, protectedGitPaths } from './protected-files.js';
import { toolchainPaths } from './system-view.js';

/** `write`: bash (allowed paths writable, network per SANDBOX_NETWORK); `read`: everything else. */
export type SandboxMode = 'read' | 'write';

/** Every path no tool process may change, around a command run in `cwd`: git's and the service's `.env`. */
export const protectedPathsFor = (context: Pick<ToolContext, 'sandbox'>, cwd: string): string[] => [
  ...protectedGitPaths(cwd, context.sandbox.roots),
  ...context.sandbox.protectedFiles,
];

/**
 * protectedPathsFor as byte strings (util/byte-path.ts), with the git paths whose names are not
 * UTF-8 (no text names them, so they cannot be bound read-only): for the snapshot compared after
 * the command.
 */
export const protectedPathBytesFor = (context: ToolContext, cwd: string): string[] => [
  ...protectedGitPathBytes(cwd, context.sandbox.roots),
  ...context.sandbox.protectedFiles.map(bytePath),
];

const MEMO_LIMIT = 16;

/**
 * The toolchain directories the sandbox shows, found once per PATH and settings by each instance
 * (the service's is built at start-up): scanning PATH costs milliseconds, and toolchains move only
 * with a restart. Concurrent first calls share one scan.
 */
export class Toolchains {
  private readonly memo = new Map<string, Promise<string[]>>();

  for(searchPath: string, readPaths: readonly string[], roots: readonly string[]): Promise<string[]> {
    const key = [searchPath, readPaths.join('\0'), roots.join('\0')].join('\n');
    let found = this.memo.get(key);
    if (found === undefined) {
      found = toolchainPaths(searchPath, readPaths, roots);
      if (this.memo.size >= MEMO_LIMIT) this.memo.clear();
      this.memo.set(key, found);
    }
    return found;
  }
}

/**
 * Where users' files live (ALLOWED_PATHS, WORKSPACES_DIR): no toolchain found on the service's
 * PATH is shown from there. A run's own workspace is mounted as itself; a virtualenv or
 * node_modules/.bin inside another user's workspace (or the shared ALLOWED_PATHS) on the service's
 * PATH would otherwise be shown read-only to every user's commands (TEAMS.md section 9).
 */
const usersTerritory = (settings: ToolSettings): string[] => [...settings.allowedPaths, ...(settings.workspacesDir === '' ? [] : [settings.workspacesDir])];

/** What the sandbox needs of a tool call's context (an MCP server's start has no call). */
export type SandboxContext = Pick<ToolContext, 'sandbox' | 'settings' | 'host'>;

/** `network`: whether SANDBOX_NETWORK applies; by default only in mode `write` (a read-only MCP server keeps it: its tools may be remote ones). */
export interface SandboxOptions {
  network?: boolean;
}

export async function sandboxSpec(context: SandboxContext, mode: SandboxMode, searchPath: string, cwd: string, options: SandboxOptions = {}): Promise<Omit<SandboxSpec, 'cwd' | 'etc'>> {
  return {
    allowedPaths: context.sandbox.roots,
    writable: mode === 'write',
    network: (options.network ?? mode === 'write') && context.settings.sandboxNetwork,
    // Found once: those text can name go as text, the others as bytes (`--args`, bubblewrap.ts).
    ...readOnlyBinds(protectedGitPathBytes(cwd, context.sandbox.roots), context.sandbox.protectedFiles),
    hiddenPaths: context.sandbox.hiddenPaths,
    toolchains: await context.host.toolchains.for(searchPath, context.settings.sandboxReadPaths, [...context.sandbox.roots, ...usersTerritory(context.settings)]),
    tmpBytes: context.settings.sandboxMemoryMb * 1024 * 1024,
  };
}

/** The protected git paths (byte strings) split into what a text argument names and what only bytes do, with the service's own files. */
function readOnlyBinds(gitPaths: readonly string[], protectedFiles: readonly string[]): { readOnlyPaths: string[]; readOnlyPathBytes: string[] } {
  const readOnlyPaths = [...protectedFiles];
  const readOnlyPathBytes: string[] = [];
  for (const path of gitPaths) {
    const bytes = pathBytes(path);
    if (isUtf8(bytes)) readOnlyPaths.push(bytes.toString('utf8'));
    else readOnlyPathBytes.push(path);
  }
  return { readOnlyPaths, readOnlyPathBytes };
}

export interface ToolSandbox {
  availability: SandboxAvailability;
  /** Present when processes run sandboxed; absent when the operator disabled the sandbox. */
  launcher?: SandboxLauncher;
}

/**
 * The sandbox for one tool call's processes. With the sandbox unavailable there is no launcher and
 * the caller must refuse (or, for search, not start a process at all).
 */
export async function toolSandbox(context: SandboxContext, mode: SandboxMode, searchPath: string, cwd: string, options: SandboxOptions = {}): Promise<ToolSandbox> {
  const availability = await context.host.sandboxes.detect(context.settings);
  if (!isAvailable(availability)) return { availability };
  const limits = { memoryMb: context.settings.sandboxMemoryMb, maxProcesses: context.settings.sandboxMaxProcesses, maxFileMb: context.settings.sandboxMaxFileMb };
  return { availability, launcher: new SandboxLauncher(availability, await sandboxSpec(context, mode, searchPath, cwd, options), limits) };
}
