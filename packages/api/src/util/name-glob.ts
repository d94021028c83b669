import { compileGlobElements, literalElement, MAX_GLOB_WILDCARDS, type GlobElement, type GlobMatcher } from './glob-automaton.js';

const ANY = (): boolean => true;

/**
 * A glob on a name (a tool's): `*` any run of characters, `?` one character, everything else
 * itself. Matched by the linear-time automaton: operators write these, but a name comes from an
 * MCP server, which may be hostile. Throws on more wildcards than the automaton takes.
 */
export function compileNameGlob(pattern: string): GlobMatcher {
  const elements: GlobElement[] = [];
  let wildcards = 0;
  for (const char of pattern) {
    if (char === '*' || char === '?') wildcards++;
    if (char === '*') elements.push({ kind: 'many', test: ANY });
    else if (char === '?') elements.push({ kind: 'one', test: ANY });
    else elements.push(literalElement(char.codePointAt(0) as number));
  }
  if (wildcards > MAX_GLOB_WILDCARDS) throw new Error(`a glob may hold at most ${MAX_GLOB_WILDCARDS} wildcards`);
  return compileGlobElements(elements);
}

export const isNameGlob = (pattern: string): boolean => pattern.includes('*') || pattern.includes('?');
