import { spawnSync } from 'node:child_process';
import { fileURLToPath, pathToFileURL } from 'node:url';

export const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));

// tsx's loader by absolute URL, so a script can run with any working directory (a bare
// `--import tsx` resolves from the working directory, which a temp repository lacks).
const TSX_LOADER = pathToFileURL(`${REPO_ROOT}node_modules/tsx/dist/loader.mjs`).href;

export interface ScriptResult {
  status: number | null;
  stdout: string;
  stderr: string;
  /** stdout split into lines, without the empty last one. */
  lines: string[];
}

/** Runs scripts/<name>.ts as a real child process, the way `npm run <name>` does. */
export function runScript(
  name: string,
  args: readonly string[],
  options: { cwd?: string; env?: Record<string, string | undefined> } = {},
): ScriptResult {
  const result = spawnSync(process.execPath, ['--import', TSX_LOADER, `${REPO_ROOT}scripts/${name}.ts`, ...args], {
    cwd: options.cwd ?? REPO_ROOT,
    // INIT_CWD is npm's "where the user typed the command"; a test sets it only on purpose.
    env: { ...process.env, INIT_CWD: undefined, ...options.env },
    encoding: 'utf8',
  });
  if (result.error) throw result.error;
  return {
    status: result.status,
    stdout: result.stdout,
    stderr: result.stderr,
    lines: result.stdout.split('\n').filter((line) => line !== ''),
  };
}
