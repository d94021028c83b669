/**
 * Glob patterns compiled the way ripgrep's globset compiles them (with `literal_separator`):
 * `*` and `?` stop at `/`, `**` spans directories only as a whole path component, `{a,b}`
 * alternates, `[...]` is a class (`[!...]` or `[^...]` negates) and `\` escapes. The JavaScript
 * backend uses this one compiler for ignore files and the tools use it for their patterns, so a
 * pattern means the same thing whichever backend runs. Matching never backtracks (see
 * glob-automaton.ts): a hostile pattern cannot stall the service.
 */

import { compileGlobElements, literalElement, MAX_GLOB_WILDCARDS, type CodePointTest, type GlobElement, type GlobMatcher } from '../../util/glob-automaton.js';

/** A glob the compiler cannot read, such as a class with a reversed range (`[z-a]`). */
export class GlobSyntaxError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'GlobSyntaxError';
  }
}

const SLASH = 0x2f;
const ANY: CodePointTest = () => true;
const NOT_SLASH: CodePointTest = (c) => c !== SLASH;
const codePointAt = (text: string, i: number): number => text.codePointAt(i) as number;
const width = (codePoint: number): number => (codePoint > 0xffff ? 2 : 1);

/** Index of the `]` closing a class that starts at `start` (the `[`), or -1. */
function classEnd(glob: string, start: number): number {
  let i = start + 1;
  if (glob[i] === '!' || glob[i] === '^') i++;
  if (glob[i] === ']') i++;
  for (; i < glob.length; i++) if (glob[i] === ']') return i;
  return -1;
}

/** `[...]`'s body as a test: members are literal, `x-y` is a range, a leading `!` or `^` negates. */
function classTest(body: string): CodePointTest {
  const negated = body.startsWith('!') || body.startsWith('^');
  const members = [...(negated ? body.slice(1) : body)].map((char) => codePointAt(char, 0));
  const ranges: [number, number][] = [];
  for (let i = 0; i < members.length; i++) {
    const low = members[i] as number;
    const high = members[i + 2];
    if (members[i + 1] === 0x2d && high !== undefined) {
      if (high < low) throw new GlobSyntaxError(`invalid range ${String.fromCodePoint(low)}-${String.fromCodePoint(high)} in [${body}]`);
      ranges.push([low, high]);
      i += 2;
    } else {
      ranges.push([low, low]);
    }
  }
  return (c) => ranges.some(([low, high]) => c >= low && c <= high) !== negated;
}

/** Top-level alternatives of the braces starting at `start`, and the index after `}`. */
function braceAlternatives(glob: string, start: number): { alternatives: string[]; end: number } | undefined {
  const alternatives: string[] = [];
  let depth = 0;
  let current = '';
  for (let i = start + 1; i < glob.length; i++) {
    const c = glob[i] as string;
    if (c === '\\') {
      current += c + (glob[i + 1] ?? '');
      i++;
    } else if (c === '{') {
      depth++;
      current += c;
    } else if (c === '}' && depth > 0) {
      depth--;
      current += c;
    } else if (c === '}') {
      alternatives.push(current);
      return { alternatives, end: i + 1 };
    } else if (c === ',' && depth === 0) {
      alternatives.push(current);
      current = '';
    } else {
      current += c;
    }
  }
  return undefined;
}

/** `**` spans directories only when it is a whole path component; elsewhere it is `*`. */
function translateStars(glob: string, i: number): { element: GlobElement; next: number } {
  const atComponentStart = i === 0 || glob[i - 1] === '/';
  const after = glob[i + 2];
  if (atComponentStart && after === '/') {
    // Any number of leading directories, none included.
    return { element: { kind: 'choice', options: [[], [{ kind: 'many', test: ANY }, literalElement(SLASH)]] }, next: i + 3 };
  }
  if (atComponentStart && after === undefined) return { element: { kind: 'many', test: ANY }, next: i + 2 };
  return { element: { kind: 'many', test: NOT_SLASH }, next: i + 2 };
}

/** The pieces of `glob`, for the linear-time matcher. */
export function parseGlob(glob: string): GlobElement[] {
  const out: GlobElement[] = [];
  let i = 0;
  while (i < glob.length) {
    const c = glob[i] as string;
    if (c === '\\') {
      const escaped = i + 1 < glob.length ? codePointAt(glob, i + 1) : 0x5c;
      out.push(literalElement(escaped));
      i += 1 + width(escaped);
    } else if (c === '*' && glob[i + 1] === '*') {
      const stars = translateStars(glob, i);
      out.push(stars.element);
      i = stars.next;
    } else if (c === '*') {
      out.push({ kind: 'many', test: NOT_SLASH });
      i++;
    } else if (c === '?') {
      out.push({ kind: 'one', test: NOT_SLASH });
      i++;
    } else if (c === '[' && classEnd(glob, i) !== -1) {
      const end = classEnd(glob, i);
      out.push({ kind: 'one', test: classTest(glob.slice(i + 1, end)) });
      i = end + 1;
    } else if (c === '{' && braceAlternatives(glob, i)) {
      const braces = braceAlternatives(glob, i) as { alternatives: string[]; end: number };
      out.push({ kind: 'choice', options: braces.alternatives.map(parseGlob) });
      i = braces.end;
    } else {
      const codePoint = codePointAt(glob, i);
      out.push(literalElement(codePoint));
      i += width(codePoint);
    }
  }
  return out;
}

/**
 * Matching costs up to (path length) x (pattern size) when every state set is new, so the size is
 * bounded: real globs are far below these, and ripgrep's own limits on a pattern are similar.
 */
export const MAX_GLOB_LENGTH = 1024;

/** Characters that may make a glob more than literal text (`]`, `}` included even where parseGlob reads them literally). */
const SYNTAX = /[*?[\]{}\\]/;

/**
 * Text of a glob that reads as itself: no wildcard, class, brace or escape, and no `/`. Nor a
 * low surrogate first: the automaton reads a path by code points, and one that ends a pair in the
 * path is not the lone one the glob names, which `endsWith` would not see.
 */
const plainName = (text: string): boolean => !SYNTAX.test(text) && !text.includes('/') && !/^[\uDC00-\uDFFF]/.test(text);

/**
 * The shapes most globs have, tested without the automaton, as ripgrep's globset does (its
 * literal, basename-literal and extension strategies): the same answer for every path, with no
 * DFA step per character. undefined for any other glob.
 */
function plainStrategy(glob: string): GlobMatcher | undefined {
  if (!SYNTAX.test(glob)) return { test: (text) => text === glob };
  if (glob.startsWith('**/*')) {
    // `**/*.ts`: the last component ends with `.ts`, and since `.ts` holds no `/`, so does the path.
    const suffix = glob.slice(4);
    if (plainName(suffix)) return { test: (text) => text.endsWith(suffix) };
  } else if (glob.startsWith('**/')) {
    // `**/name`: the whole path, or its last component, is `name`.
    const name = glob.slice(3);
    const slashName = `/${name}`;
    if (plainName(name)) return { test: (text) => text === name || text.endsWith(slashName) };
  } else if (glob.startsWith('*')) {
    // `*.ts`: a path of one component ending with `.ts`.
    const suffix = glob.slice(1);
    if (plainName(suffix)) return { test: (text) => text.endsWith(suffix) && !text.includes('/') };
  }
  return undefined;
}

/**
 * A matcher of whole relative paths (`a/b/c.ts`) against `glob`, in time linear in the path's
 * length whatever the pattern. Throws GlobSyntaxError for a glob it cannot read or that is too big.
 */
export function compileGlob(glob: string): GlobMatcher {
  if (glob.length > MAX_GLOB_LENGTH) throw new GlobSyntaxError(`longer than ${MAX_GLOB_LENGTH} characters`);
  const wildcards = glob.match(/[*?[]/g)?.length ?? 0;
  if (wildcards > MAX_GLOB_WILDCARDS) throw new GlobSyntaxError(`more than ${MAX_GLOB_WILDCARDS} wildcards`);
  return plainStrategy(glob) ?? compileGlobElements(parseGlob(glob));
}

/**
 * The part of `glob` after its last `/` when that part alone decides a file's name (no `/` hides
 * inside braces after it and it is not `**`), else undefined. ripgrep can pre-select files by
 * this name glob (`--type-add`) while still honouring ignore files.
 */
export function fileNameGlob(glob: string): string | undefined {
  let depth = 0;
  let lastSlash = -1;
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i];
    if (c === '\\') i++;
    else if (c === '{') depth++;
    else if (c === '}' && depth > 0) depth--;
    else if (c === '/' && depth > 0) return undefined;
    else if (c === '/') lastSlash = i;
  }
  const name = glob.slice(lastSlash + 1);
  if (name === '' || name.includes('**') || name.includes(':') || depth !== 0) return undefined;
  return name;
}
