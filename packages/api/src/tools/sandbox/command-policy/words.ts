import type { DoubleQuotedPart, GlobPart, Word, WordPart } from 'unbash';
import { refuse } from './refusal.js';
import type { GlobToken, ShellWord } from './plan.js';

/** One character of a word after quote removal; `quoted` says whether bash gives it meaning. */
interface Char {
  char: string;
  quoted: boolean;
}

type Piece = { kind: 'chars'; chars: Char[] } | { kind: 'glob'; token: GlobToken; text: string };

const PART_NAMES: Record<string, string> = {
  SimpleExpansion: 'variable expansion ($VAR)',
  ParameterExpansion: 'parameter expansion (${...})',
  CommandExpansion: 'command substitution ($(...) or backticks)',
  ArithmeticExpansion: 'arithmetic expansion ($((...)))',
  ProcessSubstitution: 'process substitution (<(...) or >(...))',
  BraceExpansion: 'brace expansion ({a,b})',
  ExtendedGlob: 'extended glob patterns',
  AnsiCQuoted: "$'...' quoting",
  LocaleString: '$"..." quoting',
};

export const describePart = (type: string): string => PART_NAMES[type] ?? `shell syntax "${type}"`;

// Unquoted characters that mean something to bash inside a word; unbash reports them as their own
// parts, so meeting one in a literal means the parsers read the word differently.
const SPECIAL_UNQUOTED = /[$`'"()<>|&;*?[\]\s]/;

function unquotedLiteral(text: string): Char[] {
  const chars: Char[] = [];
  for (let i = 0; i < text.length; i++) {
    const char = text[i] as string;
    if (char === '\\') {
      const next = text[i + 1];
      if (next === undefined) refuse('a word ends with a lone backslash');
      chars.push({ char: next as string, quoted: true });
      i++;
      continue;
    }
    if (SPECIAL_UNQUOTED.test(char)) refuse(`unexpected "${char}" in a word`);
    chars.push({ char, quoted: false });
  }
  return chars;
}

const DOUBLE_QUOTE_ESCAPES = new Set(['$', '`', '"', '\\']);

function doubleQuoted(part: DoubleQuotedPart): Char[] {
  for (const child of part.parts) if (child.type !== 'Literal') refuse(describePart(child.type));
  const inner = part.text.slice(1, -1);
  let value = '';
  for (let i = 0; i < inner.length; i++) {
    const char = inner[i] as string;
    const next = inner[i + 1];
    if (char === '\\' && next !== undefined && DOUBLE_QUOTE_ESCAPES.has(next)) {
      value += next;
      i++;
    } else if (char === '$' || char === '`') {
      refuse(describePart('SimpleExpansion'));
    } else {
      value += char;
    }
  }
  // Cross-check with unbash's own reading of the quoted text.
  const theirs = part.parts.map((child) => ('value' in child ? child.value : '')).join('');
  if (!part.text.startsWith('"') || !part.text.endsWith('"') || theirs !== value) refuse('a double-quoted string could not be read unambiguously');
  return [...value].map((char) => ({ char, quoted: true }));
}

const POSIX_CLASSES: Record<string, string> = {
  alpha: 'a-zA-Z',
  digit: '0-9',
  alnum: 'a-zA-Z0-9',
  upper: 'A-Z',
  lower: 'a-z',
  space: ' \\t\\n\\r\\f\\v',
  xdigit: '0-9a-fA-F',
  punct: '!-\\/:-@\\[-`{-~',
};

const escapeClassChar = (char: string): string => (/[\\\]^-]/.test(char) ? `\\${char}` : char);

/** `[a-z]`, `[!abc]`, `[[:digit:]_]` as a JavaScript class; anything fancier is refused. */
export function bracketToRegex(text: string): string {
  const body = text.slice(1, -1);
  if (!text.startsWith('[') || !text.endsWith(']') || body === '' || /[\\/'"$`]/.test(body)) refuse(`glob bracket ${text} is not supported`);
  let rest = body;
  let negate = false;
  if (rest.startsWith('!') || rest.startsWith('^')) {
    negate = true;
    rest = rest.slice(1);
  }
  let out = '';
  while (rest !== '') {
    const posix = /^\[:([a-z]+):\]/.exec(rest);
    if (posix) {
      const cls = POSIX_CLASSES[posix[1] as string];
      if (cls === undefined) refuse(`glob class [:${posix[1]}:] is not supported`);
      out += cls;
      rest = rest.slice(posix[0].length);
      continue;
    }
    const range = /^([^[\]])-([^[\]])/.exec(rest);
    if (range) {
      out += `${escapeClassChar(range[1] as string)}-${escapeClassChar(range[2] as string)}`;
      rest = rest.slice(3);
      continue;
    }
    const char = rest[0] as string;
    if (char === '[' || char === ']') refuse(`glob bracket ${text} is not supported`);
    out += escapeClassChar(char);
    rest = rest.slice(1);
  }
  return `[${negate ? '^' : ''}${out}]`;
}

function globPiece(part: GlobPart): Piece {
  if (part.kind === 'star') return { kind: 'glob', token: { kind: 'star' }, text: '*' };
  if (part.kind === 'question') return { kind: 'glob', token: { kind: 'question' }, text: '?' };
  for (const inner of part.parts) if (inner.type !== 'Literal') refuse(`glob bracket ${part.text} is not supported`);
  return { kind: 'glob', token: { kind: 'class', regex: bracketToRegex(part.text) }, text: part.text };
}

function pieceOf(part: WordPart): Piece {
  switch (part.type) {
    case 'Literal': {
      const chars = unquotedLiteral(part.text);
      if (chars.map((c) => c.char).join('') !== part.value) refuse(`the word ${part.text} could not be read unambiguously`);
      return { kind: 'chars', chars };
    }
    case 'SingleQuoted':
      if (!part.text.startsWith("'") || !part.text.endsWith("'") || part.text.slice(1, -1) !== part.value) {
        refuse('a single-quoted string could not be read unambiguously');
      }
      return { kind: 'chars', chars: [...part.value].map((char) => ({ char, quoted: true })) };
    case 'DoubleQuoted':
      return { kind: 'chars', chars: doubleQuoted(part) };
    case 'Glob':
      return globPiece(part);
    default:
      return refuse(describePart(part.type));
  }
}

/** Bash expands `{a,b}` and `{1..3}` when the braces and the comma or `..` are unquoted. */
function refuseBraceExpansion(chars: Char[]): void {
  let open = -1;
  for (let i = 0; i < chars.length; i++) {
    const { char, quoted } = chars[i] as Char;
    if (quoted) continue;
    if (char === '{') open = i;
    if (char !== '}' || open < 0) continue;
    const inside = chars.slice(open + 1, i);
    const comma = inside.some((c) => !c.quoted && c.char === ',');
    const dots = inside.some((c, k) => !c.quoted && c.char === '.' && inside[k + 1]?.char === '.' && inside[k + 1]?.quoted === false);
    if (comma || dots) refuse(describePart('BraceExpansion'));
  }
}

const ASSIGNMENT_LIKE = /^[A-Za-z_][A-Za-z0-9_]*=/;

/** Replaces a leading unquoted `~` or `~/` with home; `~user`, `~+`, `~-` are refused. */
function expandTilde(pieces: Piece[], home: string): Piece[] {
  const first = pieces[0];
  if (first?.kind !== 'chars' || first.chars[0]?.char !== '~' || first.chars[0].quoted) return pieces;
  const slash = first.chars.findIndex((c) => c.char === '/');
  const prefixEnd = slash < 0 ? first.chars.length : slash;
  if (prefixEnd !== 1 || (slash < 0 && pieces.length > 1)) refuse('only ~ and ~/ are expanded (~user, ~+ and ~- are not supported)');
  const homeChars = [...home].map((char) => ({ char, quoted: true }));
  return [{ kind: 'chars', chars: [...homeChars, ...first.chars.slice(1)] }, ...pieces.slice(1)];
}

/** In `name=...` words bash also expands `~` after `=` and `:`; that is refused rather than guessed. */
function refuseAssignmentTilde(chars: Char[]): void {
  const text = chars.map((c) => c.char).join('');
  if (!ASSIGNMENT_LIKE.test(text)) return;
  chars.forEach((c, i) => {
    const before = chars[i - 1];
    if (c.char === '~' && !c.quoted && i > 0 && before !== undefined && (before.char === '=' || before.char === ':')) {
      refuse(`tilde expansion inside ${text} is not supported; quote the ~ or write the full path`);
    }
  });
}

function toGlob(pieces: Piece[]): GlobToken[] | undefined {
  if (!pieces.some((piece) => piece.kind === 'glob')) return undefined;
  const tokens: GlobToken[] = [];
  for (const piece of pieces) {
    if (piece.kind === 'glob') tokens.push(piece.token);
    else tokens.push({ kind: 'literal', text: piece.chars.map((c) => c.char).join('') });
  }
  return tokens;
}

/** Quote removal, `~` expansion and glob detection for one word, with every part understood. */
export function evaluateWord(word: Word, home: string): ShellWord {
  const parts: readonly WordPart[] = word.parts ?? [{ type: 'Literal', pos: word.pos, end: word.end, text: word.text, value: word.value }];
  let pieces = parts.map(pieceOf);
  const chars = pieces.flatMap((piece) => (piece.kind === 'chars' ? piece.chars : [{ char: piece.text, quoted: true }]));
  refuseBraceExpansion(chars);
  refuseAssignmentTilde(chars);
  const expanded = expandTilde(pieces, home);
  const tilde = expanded !== pieces;
  pieces = expanded;
  const value = pieces.map((piece) => (piece.kind === 'chars' ? piece.chars.map((c) => c.char).join('') : piece.text)).join('');
  const glob = toGlob(pieces);
  return { source: word.text, value, ...(glob ? { glob } : {}), ...(tilde ? { tilde: true as const } : {}) };
}
