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

/**
 * ripgrep when `rg` is on PATH, else the JavaScript fallback: looked up on first use by each
 * instance (the service's is built at start-up), so a later change of PATH changes nothing.
 */
export class SearchBackendChoice {
  private chosen: SearchBackend | undefined;

  get(): SearchBackend {
    if (!this.chosen) {
      const rg = findExecutable('rg');
      this.chosen = rg ? createRipgrepBackend(rg) : javascriptBackend;
    }
    return this.chosen;
  }
}
