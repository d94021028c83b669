import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, relative, sep } from 'node:path';
import { asBytes } from './snapshot-rules.js';

/**
 * The rules of the `.gitignore` files above the working directory, as lines for the shadow
 * repository's `info/exclude`: glob_files honours them (up to the nearest directory holding
 * `.git`, as ripgrep does), git with the working directory as its work tree does not read them.
 * A rule without a slash (`*.log`, `dist/`) means the same below; a rule with one is kept when
 * it names a path inside the working directory by its literal prefix, rewritten from there; any
 * other rule cannot match below and is left out. Outer files come first: deeper ones win.
 */
export function outerIgnoreLines(workingDir: string): string[] {
  if (existsSync(join(workingDir, '.git'))) return [];
  const files: { dir: string; text: string }[] = [];
  for (let dir = dirname(workingDir); ; dir = dirname(dir)) {
    const text = readIgnoreFile(join(dir, '.gitignore'));
    if (text !== undefined) files.unshift({ dir, text });
    if (dir === dirname(dir) || existsSync(join(dir, '.git'))) break;
  }
  return files.flatMap(({ dir, text }) => {
    const prefix = `${asBytes(relative(dir, workingDir).split(sep).join('/'))}/`;
    return text.split('\n').flatMap((line) => translate(line, prefix) ?? []);
  });
}

function translate(raw: string, prefix: string): string | undefined {
  const line = raw.endsWith('\\ ') ? raw : raw.trimEnd();
  if (line === '' || line.startsWith('#')) return undefined;
  const negated = line.startsWith('!');
  let pattern = negated ? line.slice(1) : line;
  const dirOnly = pattern.endsWith('/');
  if (dirOnly) pattern = pattern.slice(0, -1);
  if (!pattern.includes('/') || pattern.startsWith('**/')) return line;
  if (pattern.startsWith('/')) pattern = pattern.slice(1);
  if (!pattern.startsWith(prefix) || pattern.length === prefix.length) return undefined;
  return `${negated ? '!' : ''}/${pattern.slice(prefix.length)}${dirOnly ? '/' : ''}`;
}

/**
 * Read synchronously, like the rest of a snapshot's bookkeeping, so one over 1 MiB is not read:
 * the directory above a working directory may still belong to the repository an attacker wrote.
 */
function readIgnoreFile(path: string): string | undefined {
  try {
    const text = readFileSync(path, 'latin1');
    return text.length <= 1024 * 1024 ? text : undefined;
  } catch {
    return undefined;
  }
}
