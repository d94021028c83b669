import { accessSync, constants, statSync } from 'node:fs';
import { join } from 'node:path';
import type { SearchBackend } from './backend.js';
import { javascriptBackend } from './javascript.js';
import { createRipgrepBackend } from './ripgrep.js';

/** The absolute path of the executable `name` in the directories of `searchPath`, if any. */
export function findExecutable(name: string, searchPath = process.env.PATH ?? ''): string | undefined {
  for (const dir of searchPath.split(':')) {
    if (!dir.startsWith('/')) continue; // a relative PATH entry would depend on the current directory
    const candidate = join(dir, name);
    try {
      accessSync(candidate, constants.X_OK);
      if (statSync(candidate).isFile()) return candidate;
    } catch {
      // not here
    }
  }
  return undefined;
}

let chosen: SearchBackend | undefined;

/** ripgrep when `rg` is on PATH (looked up once), else the JavaScript fallback. */
export function defaultSearchBackend(): SearchBackend {
  if (!chosen) {
    const rg = findExecutable('rg');
    chosen = rg ? createRipgrepBackend(rg) : javascriptBackend;
  }
  return chosen;
}
