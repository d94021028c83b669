import { statSync } from 'node:fs';
import { resolve } from 'node:path';
import { expandHome } from '../config/home.js';
import { CliError } from '../errors.js';

/** `-d/--directory` as an absolute path that exists: the agent works there, so it must be real. */
export function workingDirectory(given: string | undefined): string {
  const path = resolve(expandHome(given ?? '.'));
  let isDirectory = false;
  try {
    isDirectory = statSync(path).isDirectory();
  } catch {
    isDirectory = false;
  }
  if (!isDirectory) throw new CliError(`Not a directory: ${path}`, 'pass an existing directory to -d/--directory');
  return path;
}
