import type { PathGlob } from './backend.js';
import type { GlobMatcher } from '../../util/glob-automaton.js';
import { compileGlob, fileNameGlob, GlobSyntaxError } from './glob.js';

/** A pattern the tools refuse; the message is what the agent reads. */
export class PatternError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'PatternError';
  }
}

/**
 * The regular expression the JavaScript backend runs on each line (without its terminator).
 * `s` lets `.` match any character, as in ripgrep where lines hold no newline; `u` reads the
 * pattern as Unicode like ripgrep does. Patterns that only parse without `u` (JavaScript-style
 * escapes such as `\-` outside a class) are accepted too.
 */
export function compileSearchRegex(pattern: string, caseSensitive: boolean): RegExp {
  const flags = caseSensitive ? 's' : 'si';
  try {
    return new RegExp(pattern, `${flags}u`);
  } catch {
    try {
      return new RegExp(pattern, flags);
    } catch (error) {
      throw new PatternError(`Invalid regex pattern: ${(error as Error).message}`);
    }
  }
}

const PARENT_SEGMENT = /(^|[/{,])\.\.($|[/},])/;

function refuseParentSegments(glob: string): void {
  if (PARENT_SEGMENT.test(glob)) throw new PatternError(`Pattern may not contain '..': ${glob} (pass another path instead)`);
}

/** The tools' own globs: one that cannot be read is the agent's to fix. */
function compileToolGlob(glob: string): GlobMatcher {
  try {
    return compileGlob(glob);
  } catch (error) {
    if (error instanceof GlobSyntaxError) throw new PatternError(`Invalid glob pattern ${glob}: ${error.message}`);
    throw error;
  }
}

const stripDotSlash = (glob: string): string => glob.replace(/^(\.\/)+/, '');

/** glob_files' pattern: relative to the search root, `*.py` matching only at the top (`**` descends). */
export function rootGlob(pattern: string): PathGlob {
  const glob = stripDotSlash(pattern);
  if (glob === '') throw new PatternError('Pattern cannot be empty');
  refuseParentSegments(glob);
  const regex = compileToolGlob(glob);
  const nameGlob = fileNameGlob(glob);
  return { source: pattern, matches: (path) => regex.test(path), ...(nameGlob ? { nameGlob } : {}) };
}

/**
 * grep_content's file_glob, read like ripgrep's `--glob`: without a `/` it matches file names at
 * any depth (`*.ts`), with one it matches paths from the search root (`src/**\/*.ts`); a trailing
 * `/` means everything inside that directory and a leading `!` excludes instead of selecting.
 */
export function fileFilterGlob(pattern: string): PathGlob {
  const negated = pattern.startsWith('!');
  let glob = stripDotSlash(negated ? pattern.slice(1) : pattern);
  if (glob === '' || glob === '/') throw new PatternError(`Invalid file_glob: ${pattern}`);
  refuseParentSegments(glob);
  if (glob.endsWith('/')) glob += '**';
  const anchored = glob.startsWith('/') || glob.includes('/');
  if (glob.startsWith('/')) glob = glob.slice(1);
  const regex = compileToolGlob(anchored ? glob : `**/${glob}`);
  if (negated) return { source: pattern, matches: (path) => !regex.test(path) };
  const nameGlob = fileNameGlob(glob);
  return { source: pattern, matches: (path) => regex.test(path), ...(nameGlob ? { nameGlob } : {}) };
}
