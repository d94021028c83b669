import { execFile } from 'node:child_process';
import { statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { isWithin } from './paths.js';
import { safeSearchPath } from './exec/environment.js';
import { locateProgram } from './exec/program-path.js';
import type { Launcher } from './exec/run-pipeline.js';

export interface Confinement {
  /** True when bash's commands run inside bubblewrap. */
  active: boolean;
  /** Why, in words for /health and the start-up log. */
  reason: string;
  bwrapPath?: string;
}

export interface ConfinementSettings {
  sandboxEnabled: boolean;
  /** When given, bwrap is looked up on the same search path commands get (none inside these). */
  allowedPaths?: readonly string[];
}

export interface BwrapOptions {
  bwrapPath: string;
  /** Bound writable; everything else is read-only. */
  allowedPaths: readonly string[];
  /** Files inside the allowed paths kept read-only (the service's `.env`); bound when they exist. */
  readOnlyFiles?: readonly string[];
  network: boolean;
  cwd: string;
}

const PROBE_TIMEOUT_MS = 5000;

/**
 * The isolation every command gets: the root file system read-only, the allowed paths writable,
 * private /tmp, /dev and /proc, new namespaces for everything (the network only when allowed), no
 * capabilities, a new session, and death with the service.
 */
export function bwrapArguments(options: BwrapOptions, executable: string, args: readonly string[]): string[] {
  const binds = options.allowedPaths.flatMap((path) => ['--bind', path, path]);
  const hooks = gitHookDirectories(options.cwd, options.allowedPaths).flatMap((path) => ['--ro-bind', path, path]);
  const readOnly = (options.readOnlyFiles ?? []).filter(exists).flatMap((path) => ['--ro-bind', path, path]);
  return [
    '--ro-bind', '/', '/',
    '--dev', '/dev',
    '--proc', '/proc',
    '--tmpfs', '/tmp',
    ...binds,
    ...hooks,
    ...readOnly,
    '--unshare-all',
    ...(options.network ? ['--share-net'] : []),
    // Without this, a root service's commands keep CAP_SYS_ADMIN and can remount / read-write.
    '--cap-drop', 'ALL',
    '--die-with-parent',
    '--new-session',
    // The service's TMPDIR may lie on the read-only root; /tmp is the sandbox's own.
    '--setenv', 'TMPDIR', '/tmp',
    '--chdir', options.cwd,
    '--',
    executable,
    ...args,
  ];
}

const exists = (path: string): boolean => {
  try {
    statSync(path);
    return true;
  } catch {
    return false;
  }
};

const isDirectory = (path: string): boolean => {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
};

/**
 * `.git/hooks` of the repositories a command can reach (the working directory's, up to its allowed
 * root, and each root's), kept read-only inside the sandbox so no hook is planted for a later git.
 */
export function gitHookDirectories(cwd: string, allowedPaths: readonly string[]): string[] {
  const found = new Set<string>();
  const root = allowedPaths.find((r) => isWithin(r, cwd));
  for (let dir = cwd; root !== undefined && isWithin(root, dir); dir = dirname(dir)) {
    const hooks = join(dir, '.git', 'hooks');
    if (isDirectory(hooks)) found.add(hooks);
    if (dir === root) break;
  }
  for (const r of allowedPaths) if (isDirectory(join(r, '.git', 'hooks'))) found.add(join(r, '.git', 'hooks'));
  return [...found];
}

export function bwrapLauncher(options: Omit<BwrapOptions, 'cwd'>, cwd: string): Launcher {
  return (invocation) => ({
    file: options.bwrapPath,
    args: bwrapArguments({ ...options, cwd }, invocation.executable, invocation.argv.slice(1)),
  });
}

const probes = new Map<string, Promise<Confinement>>();

/** Runs `true` in the same sandbox the commands get: namespaces may be unavailable (containers). */
function probe(bwrapPath: string): Promise<Confinement> {
  const truePath = locateProgram('true', '/usr/bin:/bin') ?? '/bin/true';
  const args = bwrapArguments({ bwrapPath, allowedPaths: [], network: false, cwd: '/' }, truePath, []);
  return new Promise((resolve) => {
    execFile(bwrapPath, args, { timeout: PROBE_TIMEOUT_MS, env: {} }, (error, _stdout, stderr) => {
      if (error === null) resolve({ active: true, reason: `bubblewrap at ${bwrapPath}`, bwrapPath });
      else resolve({ active: false, reason: `bubblewrap cannot create a sandbox here: ${stderr.trim() || error.message}` });
    });
  });
}

/**
 * Whether bash's commands run confined. Checked once per bwrap binary; health reports it. Without
 * confinement the text policy alone applies.
 */
export function detectConfinement(
  settings: ConfinementSettings,
  searchPath: string = safeSearchPath(process.env.PATH, settings.allowedPaths ?? []),
): Promise<Confinement> {
  if (!settings.sandboxEnabled) return Promise.resolve({ active: false, reason: 'disabled by SANDBOX_ENABLED=false' });
  const bwrapPath = locateProgram('bwrap', searchPath);
  if (bwrapPath === undefined) return Promise.resolve({ active: false, reason: 'bubblewrap (bwrap) is not installed' });
  let result = probes.get(bwrapPath);
  if (result === undefined) {
    result = probe(bwrapPath);
    probes.set(bwrapPath, result);
  }
  return result;
}
