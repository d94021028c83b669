import { delimiter, isAbsolute } from 'node:path';
import { isWithin } from '../paths.js';

const PASSED = new Set(['PATH', 'HOME', 'USER', 'LANG', 'TERM', 'TZ', 'TMPDIR']);
const FALLBACK_PATH = '/usr/local/bin:/usr/bin:/bin';

/**
 * The search path children get: absolute directories only, and none inside the allowed paths, so
 * a command can never run a program it (or an earlier command) wrote there under an allowed name.
 */
export function safeSearchPath(path: string | undefined, allowedRoots: readonly string[]): string {
  const entries = (path ?? '')
    .split(delimiter)
    .filter((dir) => dir !== '' && isAbsolute(dir) && !allowedRoots.some((root) => isWithin(root, dir)));
  return entries.length > 0 ? [...new Set(entries)].join(delimiter) : FALLBACK_PATH;
}

/**
 * An allowlisted environment (PATH, HOME, USER, LANG, LC_*, TERM, TZ, TMPDIR): never the
 * service's settings, keys or tokens.
 */
export function childEnvironment(source: NodeJS.ProcessEnv, allowedRoots: readonly string[]): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(source)) {
    if (value !== undefined && (PASSED.has(name) || name.startsWith('LC_'))) env[name] = value;
  }
  env.PATH = safeSearchPath(source.PATH, allowedRoots);
  return env;
}
