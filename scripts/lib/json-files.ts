import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

export interface Collected {
  files: string[];
  /** Arguments that name nothing on disk. */
  missing: string[];
}

/** Schema definitions live beside data in some layouts; they are never data themselves. */
const isDataFile = (name: string): boolean => name.endsWith('.json') && !name.endsWith('.schema.json');
const isSkippedDir = (name: string): boolean => name.startsWith('.') || name === 'node_modules';

function walk(dir: string, out: string[]): void {
  const entries = readdirSync(dir, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name));
  for (const entry of entries) {
    const path = join(dir, entry.name);
    // Symlinked directories are not followed: a link back up the tree would never end.
    if (entry.isDirectory() && !isSkippedDir(entry.name)) walk(path, out);
    else if (isDataFile(entry.name) && (entry.isFile() || (entry.isSymbolicLink() && isFile(path)))) out.push(path);
  }
}

function isFile(path: string): boolean {
  try {
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

/**
 * Expands the command-line paths: a file is taken as given (whatever its name, the user chose
 * it), a directory contributes every *.json below it except *.schema.json, hidden directories
 * and node_modules.
 */
export function collectJsonFiles(paths: readonly string[]): Collected {
  const files: string[] = [];
  const missing: string[] = [];
  for (const path of paths) {
    let isDirectory: boolean;
    try {
      isDirectory = statSync(path).isDirectory();
    } catch {
      missing.push(path);
      continue;
    }
    if (isDirectory) walk(path, files);
    else files.push(path);
  }
  return { files: [...new Set(files)], missing };
}
