import { existsSync } from 'node:fs';
import { dirname, join, relative, sep } from 'node:path';
import { readRegularFileSync } from '../util/regular-file.js';
import { asBytes, escapePattern } from './snapshot-rules.js';

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
    return outerRuleLines(text, prefix);
  });
}

/** The lines of an ignore file above the working directory, which lies at `prefix` (`a/b/`) from it. */
export const outerRuleLines = (text: string, prefix: string): string[] => text.split('\n').flatMap((line) => translate(line, prefix) ?? []);

/**
 * The lines of an ignore file in the directory `dir` (bytes, relative, '' for the working
 * directory itself), rewritten to match from the working directory: anchored at `dir`, a rule
 * without a slash at any depth below it, as it matched there.
 */
export function innerRuleLines(text: string, dir: string): string[] {
  return text.split('\n').flatMap((raw) => {
    const line = raw.endsWith('\\ ') ? raw : raw.trimEnd();
    if (line === '' || line.startsWith('#')) return [];
    if (dir === '' || dir.includes('\n')) return dir === '' ? [line] : [];
    const negated = line.startsWith('!');
    let pattern = negated ? line.slice(1) : line;
    const dirOnly = pattern.endsWith('/');
    if (dirOnly) pattern = pattern.slice(0, -1);
    if (pattern === '') return [];
    const anchor = `/${escapePattern(dir)}/`;
    const rooted = pattern.startsWith('/') ? pattern.slice(1) : pattern.includes('/') || pattern.startsWith('**/') ? pattern : `**/${pattern}`;
    return [`${negated ? '!' : ''}${anchor}${rooted}${dirOnly ? '/' : ''}`];
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
 * An ignore file as snapshots read it: synchronously, like the rest of a snapshot's bookkeeping,
 * and only a regular file of at most 1 MiB, as bytes. The directory above a working directory may
 * still belong to the repository an attacker wrote, and anything else (a FIFO planted as
 * `.gitignore` or `.ignore`) would stop the event loop; it counts as missing.
 */
export function readIgnoreFile(path: string | Buffer): string | undefined {
  return readRegularFileSync(path, 1024 * 1024)?.toString('latin1');
}
