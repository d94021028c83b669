import type { GlobMatcher } from '../../util/glob-automaton.js';
import { compileGlob, GlobSyntaxError, MAX_GLOB_LENGTH } from './glob.js';

/**
 * Lines of a `.gitignore`, `.ignore` or `.rgignore` file read the way ripgrep's `ignore` crate reads
 * them (not the way git does): each path is judged on its own against each file's rules, the last
 * matching rule wins, and the caller walks directories top-down and prunes what is ignored. The
 * npm `ignore` package follows git instead (a rule also excludes everything under a matched parent
 * directory), which would make the JavaScript backend disagree with ripgrep, e.g. when the search
 * root sits inside a directory an outer `.gitignore` excludes.
 */
export interface IgnoreLine {
  /** The glob matching paths relative to the ignore file's directory. */
  pattern: string;
  /** `!pattern`: re-includes what an earlier rule excluded. */
  whitelist: boolean;
  /** `pattern/`: applies to directories only. */
  dirOnly: boolean;
}

export interface IgnoreRule extends Omit<IgnoreLine, 'pattern'> {
  /** Matches paths relative to the ignore file's directory, in linear time (the file may be hostile). */
  glob: GlobMatcher;
}

export type IgnoreVerdict = 'ignore' | 'whitelist' | undefined;

/** One line of an ignore file, or undefined for blanks and comments; its glob is not compiled yet. */
export function readIgnoreLine(raw: string): IgnoreLine | undefined {
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
  let pattern = !anchored && !line.includes('/') && !line.startsWith('**/') ? `**/${line}` : line;
  if (pattern.endsWith('/**')) pattern += '/*';
  return { pattern, whitelist, dirOnly };
}

/** One line of an ignore file compiled, or undefined for blanks, comments and globs that cannot be read (ripgrep skips those too). */
export function parseIgnoreLine(raw: string): IgnoreRule | undefined {
  const line = readIgnoreLine(raw);
  return line === undefined ? undefined : compileIgnoreLine(line);
}

function compileIgnoreLine({ pattern, whitelist, dirOnly }: IgnoreLine): IgnoreRule | undefined {
  try {
    return { glob: compileGlob(pattern), whitelist, dirOnly };
  } catch (error) {
    if (error instanceof GlobSyntaxError) return undefined;
    throw error;
  }
}

/** Characters that make a pattern more than a literal path (`[`, `{` and `\` included even when parseGlob would read them literally). */
const GLOB_SYNTAX = /[*?[\]{}\\]/;

/** The rule's position in its file and what it says, for the last-match-wins rule. */
interface Ranked {
  index: number;
  whitelist: boolean;
}

/** The last rule for one literal key: among all rules (what a directory meets) and among those not only for directories (what a file meets). */
interface LiteralRules {
  any?: Ranked;
  files?: Ranked;
}

/**
 * How a pattern without wildcards is looked up: `**\/name` by a path's last component, any other
 * literal by the whole path; undefined when the pattern needs a compiled glob.
 */
function literalKey(pattern: string): { byName: boolean; key: string } | undefined {
  if (pattern.startsWith('**/')) {
    const name = pattern.slice(3);
    return GLOB_SYNTAX.test(name) || name.includes('/') ? undefined : { byName: true, key: name };
  }
  return GLOB_SYNTAX.test(pattern) ? undefined : { byName: false, key: pattern };
}

const verdictOf = (rule: Ranked): IgnoreVerdict => (rule.whitelist ? 'whitelist' : 'ignore');

/**
 * The rules of one ignore file, kept so that a large file costs little: a rule without wildcards
 * (most of a long generated ignore file: `/dist`, `secret.txt`, `a/b/c.json`) is not compiled at
 * all but looked up by the path or its last component, so matching a path costs one look-up for
 * all of them plus the wildcard rules written after the last literal one that matched. Only the
 * wildcard rules are compiled (their count is what the caller limits).
 */
export class IgnoreRuleSet {
  /** `name` and `**\/name`: matched by a path's last component. */
  private readonly names = new Map<string, LiteralRules>();
  /** `/a`, `a/b`: matched by the whole relative path. */
  private readonly paths = new Map<string, LiteralRules>();
  private readonly globs: (IgnoreRule & Ranked)[] = [];
  private count = 0;

  /** Rules held (lines that were blank, comments or unreadable do not count). */
  get size(): number {
    return this.count;
  }

  /** Rules held that needed a compiled glob. */
  get globCount(): number {
    return this.globs.length;
  }

  /** Whether `line` needs a compiled glob. */
  static isGlob(line: IgnoreLine): boolean {
    return literalKey(line.pattern) === undefined;
  }

  /** Adds the next line of the file; false when its glob cannot be read (it is skipped, as ripgrep skips it). */
  add(line: IgnoreLine): boolean {
    const ranked = { index: this.count, whitelist: line.whitelist };
    const literal = literalKey(line.pattern);
    if (literal === undefined) {
      const rule = compileIgnoreLine(line);
      if (rule === undefined) return false;
      this.globs.push({ ...rule, ...ranked });
    } else {
      // The same bound compileGlob puts on a pattern, so a literal is read exactly as before.
      if (line.pattern.length > MAX_GLOB_LENGTH) return false;
      const table = literal.byName ? this.names : this.paths;
      const entry = table.get(literal.key) ?? {};
      entry.any = ranked;
      if (!line.dirOnly) entry.files = ranked;
      table.set(literal.key, entry);
    }
    this.count++;
    return true;
  }

  /** The verdict of the last rule matching `relativePath` (relative to the ignore file's directory). */
  match(relativePath: string, isDir: boolean): IgnoreVerdict {
    return this.matchBelow(relativePath, 0, isDir);
  }

  /**
   * match() for `path.slice(start)`, `name` being its last component when the caller has it. A
   * walk asks this of every entry, once per ignore file on its way: no closure is made, and the
   * relative path is cut only when a path rule or a glob needs it.
   */
  matchBelow(path: string, start: number, isDir: boolean, name?: string): IgnoreVerdict {
    if (this.count === 0) return undefined;
    let best: Ranked | undefined;
    if (this.names.size > 0) best = later(best, this.names.get(name ?? path.slice(path.lastIndexOf('/') + 1)), isDir);
    if (this.paths.size === 0 && this.globs.length === 0) return best === undefined ? undefined : verdictOf(best);
    const relativePath = start === 0 ? path : path.slice(start);
    if (this.paths.size > 0) best = later(best, this.paths.get(relativePath), isDir);
    for (let i = this.globs.length - 1; i >= 0; i--) {
      const rule = this.globs[i] as IgnoreRule & Ranked;
      if (best !== undefined && rule.index < best.index) break;
      if (rule.dirOnly && !isDir) continue;
      if (rule.glob.test(relativePath)) return verdictOf(rule);
    }
    return best === undefined ? undefined : verdictOf(best);
  }
}

/** Whichever of `best` and `entry`'s rule for this kind of path was written later. */
function later(best: Ranked | undefined, entry: LiteralRules | undefined, isDir: boolean): Ranked | undefined {
  const rule = isDir ? entry?.any : entry?.files;
  return rule !== undefined && (best === undefined || rule.index > best.index) ? rule : best;
}

export function parseIgnoreLines(lines: readonly string[], into = new IgnoreRuleSet()): IgnoreRuleSet {
  for (const raw of lines) {
    const line = readIgnoreLine(raw);
    if (line !== undefined) into.add(line);
  }
  return into;
}

export const parseIgnoreFile = (text: string): IgnoreRuleSet => parseIgnoreLines(text.split('\n'));

/** The verdict of the last rule matching `relativePath` (relative to the ignore file's directory). */
export const matchIgnoreRules = (rules: IgnoreRuleSet, relativePath: string, isDir: boolean): IgnoreVerdict => rules.match(relativePath, isDir);
