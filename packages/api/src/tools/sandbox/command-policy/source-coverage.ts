import { refuse } from './refusal.js';

export type Range = [start: number, end: number];

// Between the words and redirections a parser kept, only blanks, comments and list/pipe
// operators may remain; a tolerant parser that silently dropped text (a stray `(`, a `&`) is caught here.
const GAP_TOKEN = /[ \t\n]+|#[^\n]*|&&|\|\||;|\||&|[^]/gy;

function gapOperators(gap: string, separators: string[]): string[] {
  const ops: string[] = [];
  GAP_TOKEN.lastIndex = 0;
  for (let match = GAP_TOKEN.exec(gap); match !== null; match = GAP_TOKEN.exec(gap)) {
    const token = match[0];
    if (token === ';' || token.includes('\n')) separators.push(token);
    if (/^[ \t\n]+$/.test(token) || token.startsWith('#') || token === ';') continue;
    if (token === '&') refuse('background jobs (&)');
    if (token === '&&' || token === '||' || token === '|') ops.push(token);
    else refuse(`unexpected "${token}" in the command`);
  }
  return ops;
}

/**
 * Refuses unless every character is either covered by a parsed node or an expected separator.
 * Returns how many `;` and newline separators the text holds.
 */
export function checkSourceCoverage(source: string, covered: Range[], operators: string[]): number {
  const ranges = [...covered].sort((a, b) => a[0] - b[0]);
  const seen: string[] = [];
  const separators: string[] = [];
  let cursor = 0;
  for (const [start, end] of ranges) {
    if (start > cursor) seen.push(...gapOperators(source.slice(cursor, start), separators));
    cursor = Math.max(cursor, end);
  }
  seen.push(...gapOperators(source.slice(cursor), separators));
  if (seen.join(' ') !== operators.join(' ')) refuse('the command is ambiguous (operators were not read as written)');
  return separators.length;
}
