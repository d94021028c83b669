import { refuse } from '../refusal.js';

const REFUSED_NAMES: Record<string, string> = {
  system: 'awk system() runs a shell command',
  getline: 'awk getline reads files or command output',
  ARGV: 'awk programs may not change ARGV (it selects the files read)',
  ARGC: 'awk programs may not change ARGC (it selects the files read)',
};

/** After these tokens a `/` starts a regular expression; after a value it divides. */
const VALUE_END = /^(?:[A-Za-z_0-9.\])$]|"|\/re)$/;

/**
 * Scans an awk program for what makes it more than a text filter: system(), getline, pipes
 * (`|`, `|&`), output redirection in print/printf (`>`, `>>`), `@load`/`@include`, and ARGV
 * changes. gawk also runs with --sandbox, which rejects the same at run time.
 */
export function checkAwkProgram(text: string): void {
  let previous = '';
  let depth = 0;
  let printDepth: number | undefined;
  for (let i = 0; i < text.length; ) {
    const c = text[i] as string;
    if (c === ' ' || c === '\t') {
      i++;
      continue;
    }
    if (c === '\n' || c === ';' || c === '{' || c === '}') {
      if (printDepth !== undefined && depth <= printDepth) printDepth = undefined;
      previous = c;
      i++;
      continue;
    }
    if (c === '#') {
      while (i < text.length && text[i] !== '\n') i++;
      continue;
    }
    if (c === '"') {
      i = skipQuoted(text, i, '"');
      previous = '"';
      continue;
    }
    if (c === '/' && !VALUE_END.test(previous)) {
      i = skipRegex(text, i);
      previous = '/re';
      continue;
    }
    const word = /^[A-Za-z_][A-Za-z0-9_]*/.exec(text.slice(i))?.[0];
    if (word !== undefined) {
      const reason = REFUSED_NAMES[word];
      if (reason !== undefined) refuse(reason);
      if (word === 'print' || word === 'printf') printDepth = depth;
      previous = word === 'print' || word === 'printf' ? '(' : 'a';
      i += word.length;
      continue;
    }
    if (c === '@') refuse('awk @load/@include directives');
    if (c === '|') {
      if (text[i + 1] !== '|') refuse('awk pipes (| and |&) run shell commands');
      i += 2;
      previous = '|';
      continue;
    }
    if (c === '>' && printDepth !== undefined && depth === printDepth) refuse('awk output redirection (print > file)');
    if (c === '(') depth++;
    if (c === ')') depth--;
    previous = c;
    i++;
  }
}

function skipQuoted(text: string, start: number, quote: string): number {
  for (let i = start + 1; i < text.length; i++) {
    if (text[i] === '\\') i++;
    else if (text[i] === quote) return i + 1;
  }
  return refuse('awk program has an unterminated string');
}

/** A regex literal; a `/` inside a bracket expression does not end it. */
function skipRegex(text: string, start: number): number {
  let inBracket = false;
  for (let i = start + 1; i < text.length; i++) {
    const c = text[i];
    if (c === '\\') i++;
    else if (c === '[') inBracket = true;
    else if (c === ']') inBracket = false;
    else if (c === '/' && !inBracket) return i + 1;
    else if (c === '\n') break;
  }
  return refuse('awk program has an unterminated regular expression');
}
