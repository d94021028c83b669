import { realpathSync } from 'node:fs';
import { join } from 'node:path';
import type { Settings } from './settings.js';
import { isWithin, PathSandbox } from './tools/sandbox/paths.js';

/**
 * What no tool may see, even inside an allowed path: DATA_DIR (the SQLite database, checkpoints),
 * a SQLite database kept elsewhere with its journal files, the service's `.env` and MCP_CONFIG_FILE.
 */
export function hiddenPathsFor(settings: Pick<Settings, 'dataDir' | 'database'> & Partial<Pick<Settings, 'mcpConfigFile'>>, startDir: string): string[] {
  const database = settings.database.dialect === 'sqlite' && settings.database.path !== ':memory:' ? settings.database.path : undefined;
  const databaseFiles = database === undefined ? [] : ['', '-wal', '-shm', '-journal'].map((suffix) => `${database}${suffix}`);
  // /proc: the file tools run in this process, and /proc/self/environ holds the settings given as
  // environment variables (API keys, DATABASE_URL), which .env hiding alone leaves readable when
  // ALLOWED_PATHS reaches /. No coding task needs a process's /proc; the shell has its own.
  // MCP_CONFIG_FILE holds the servers' secrets (their `env` and `headers`).
  const mcpConfig = settings.mcpConfigFile === undefined || settings.mcpConfigFile === '' ? [] : [settings.mcpConfigFile];
  return [settings.dataDir, ...databaseFiles, join(startDir, '.env'), '/proc', ...mcpConfig];
}

/** Where the tools may act: the allowed paths, less what they must not see or change. */
export function toolPathSandbox(settings: Settings, startDir: string): PathSandbox {
  return workspaceSandbox(settings.allowedPaths, settings, startDir);
}

/**
 * Where one user's runs may act: `roots` (the user's workspace paths), less what no tool may see
 * or change whoever runs it. The one place a set of paths becomes a tool sandbox.
 */
export function workspaceSandbox(roots: readonly string[], settings: Settings, startDir: string): PathSandbox {
  const envFile = join(startDir, '.env');
  // The .env main.ts reads at start-up: no agent may read or rewrite the service's settings.
  // Nor the approval rules, read at start-up too: rewritten, they would let the next start run
  // unasked whatever the run chose.
  return new PathSandbox(roots, [envFile, ...(settings.approvalRulesFile === '' ? [] : [settings.approvalRulesFile])], hiddenPathsFor(settings, startDir));
}

/**
 * The allowed path that holds the home directory `home` whole, if any: its start-up files
 * (`.bashrc`, `.profile`, `.ssh/`, `.gitconfig`) run programs as the service's user outside the
 * sandbox, and `bash` could rewrite them like any file of the allowed paths.
 */
export function allowedPathHoldingHome(allowedPaths: readonly string[], home: string): string | undefined {
  let real: string;
  try {
    real = realpathSync(home);
  } catch {
    return undefined;
  }
  return allowedPaths.find((path) => isWithin(path, real));
}
