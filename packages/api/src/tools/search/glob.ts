/**
 * Glob patterns compiled the way ripgrep's globset compiles them (with `literal_separator`):
 * `*` and `?` stop at `/`, `**` spans directories only as a whole path component, `{a,b}`
 * alternates, `[...]` is a class (`[!...]` or `[^...]` negates) and `\` escapes. The JavaScript
 * backend uses this one compiler for ignore files and the tools use it for their patterns, so a
 * pattern means the same thing whichever backend runs.
 */

const REGEX_SPECIAL = /[.*+?^${}()|[\]\\/]/g;
const escapeRegex = (text: string): string => text.replace(REGEX_SPECIAL, '\\$&');

/** Index of the `]` closing a class that starts at `start` (the `[`), or -1. */
function classEnd(glob: string, start: number): number {
  let i = start + 1;
  if (glob[i] === '!' || glob[i] === '^') i++;
  if (glob[i] === ']') i++;
  for (; i < glob.length; i++) if (glob[i] === ']') return i;
  return -1;
}

function translateClass(body: string): string {
  const negated = body.startsWith('!') || body.startsWith('^');
  const members = (negated ? body.slice(1) : body).replace(/[\\\]^[]/g, '\\$&');
  return `[${negated ? '^' : ''}${members}]`;
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

/** `**` counts as recursive only when it is a whole path component. */
function translateStars(glob: string, i: number): { text: string; next: number } {
  const atComponentStart = i === 0 || glob[i - 1] === '/';
  const after = glob[i + 2];
  if (atComponentStart && after === '/') return { text: '(?:.*/)?', next: i + 3 };
  if (atComponentStart && after === undefined) return { text: '.*', next: i + 2 };
  return { text: '[^/]*', next: i + 2 };
}

/** The body of a regular expression (no anchors) equivalent to `glob`. */
export function globToRegexSource(glob: string): string {
  let out = '';
  let i = 0;
  while (i < glob.length) {
    const c = glob[i] as string;
    if (c === '\\') {
      out += escapeRegex(glob[i + 1] ?? '\\');
      i += 2;
    } else if (c === '*' && glob[i + 1] === '*') {
      const stars = translateStars(glob, i);
      out += stars.text;
      i = stars.next;
    } else if (c === '*') {
      out += '[^/]*';
      i++;
    } else if (c === '?') {
      out += '[^/]';
      i++;
    } else if (c === '[' && classEnd(glob, i) !== -1) {
      const end = classEnd(glob, i);
      out += translateClass(glob.slice(i + 1, end));
      i = end + 1;
    } else if (c === '{' && braceAlternatives(glob, i)) {
      const braces = braceAlternatives(glob, i) as { alternatives: string[]; end: number };
      out += `(?:${braces.alternatives.map(globToRegexSource).join('|')})`;
      i = braces.end;
    } else {
      out += escapeRegex(c);
      i++;
    }
  }
  return out;
}

/** A regular expression matching whole relative paths (`a/b/c.ts`) against `glob`. */
export function compileGlob(glob: string): RegExp {
  return new RegExp(`^${globToRegexSource(glob)}$`);
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
