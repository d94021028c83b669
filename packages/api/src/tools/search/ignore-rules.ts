import type { GlobMatcher } from '../../util/glob-automaton.js';
import { compileGlob, GlobSyntaxError } from './glob.js';

/**
 * Lines of a `.gitignore`, `.ignore` or `.rgignore` file read the way ripgrep's `ignore` crate reads
 * them (not the way git does): each path is judged on its own against each file's rules, the last
 * matching rule wins, and the caller walks directories top-down and prunes what is ignored. The
 * npm `ignore` package follows git instead (a rule also excludes everything under a matched parent
 * directory), which would make the JavaScript backend disagree with ripgrep, e.g. when the search
 * root sits inside a directory an outer `.gitignore` excludes.
 */
export interface IgnoreRule {
  /** Matches paths relative to the ignore file's directory, in linear time (the file may be hostile). */
  glob: GlobMatcher;
  /** `!pattern`: re-includes what an earlier rule excluded. */
  whitelist: boolean;
  /** `pattern/`: applies to directories only. */
  dirOnly: boolean;
}

export type IgnoreVerdict = 'ignore' | 'whitelist' | undefined;

/** One line of an ignore file, or undefined for blanks, comments and globs that cannot be read (ripgrep skips those too). */
export function parseIgnoreLine(raw: string): IgnoreRule | undefined {
  if (raw.startsWith('#')) return undefined;
  let line = raw.endsWith('\\ ') ? raw : raw.trimEnd();
  if (line === '') return undefined;
  let whitelist = false;
  let anchored = false;
  if (line.startsWith('\\!') || line.startsWith('\\#')) {
    line = line.slice(1);
  } else {
    if (line.startsWith('!')) {
      whitelist = true;
      line = line.slice(1);
    }
    if (line.startsWith('/')) {
      anchored = true;
      line = line.slice(1);
    }
  }
  const dirOnly = line.endsWith('/');
  if (dirOnly) line = line.slice(0, -1);
  // A pattern without a slash matches a name at any depth; one with a slash is relative to the file.
  let glob = !anchored && !line.includes('/') && !line.startsWith('**/') ? `**/${line}` : line;
  if (glob.endsWith('/**')) glob += '/*';
  try {
    return { glob: compileGlob(glob), whitelist, dirOnly };
  } catch (error) {
    if (error instanceof GlobSyntaxError) return undefined;
    throw error;
  }
}

export function parseIgnoreLines(lines: readonly string[]): IgnoreRule[] {
  return lines.flatMap((line) => parseIgnoreLine(line) ?? []);
}

export const parseIgnoreFile = (text: string): IgnoreRule[] => parseIgnoreLines(text.split('\n'));

/** The verdict of the last rule matching `relativePath` (relative to the ignore file's directory). */
export function matchIgnoreRules(rules: readonly IgnoreRule[], relativePath: string, isDir: boolean): IgnoreVerdict {
  for (let i = rules.length - 1; i >= 0; i--) {
    const rule = rules[i] as IgnoreRule;
    if (rule.dirOnly && !isDir) continue;
    if (rule.glob.test(relativePath)) return rule.whitelist ? 'whitelist' : 'ignore';
  }
  return undefined;
}
