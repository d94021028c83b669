import { accessSync, constants, statSync } from 'node:fs';
import { delimiter, join } from 'node:path';

/** Where a bare program name is found on a search path, as execvp would find it. */
export function locateProgram(name: string, searchPath: string): string | undefined {
  if (name === '' || name.includes('/')) return undefined;
  for (const dir of searchPath.split(delimiter)) {
    const candidate = join(dir, name);
    try {
      if (!statSync(candidate).isFile()) continue;
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      continue;
    }
  }
  return undefined;
}
