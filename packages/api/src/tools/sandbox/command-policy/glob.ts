import { lstatSync, opendirSync, statSync, type Dir, type Dirent } from 'node:fs';
import { isAbsolute, join } from 'node:path';
import { compileGlobElements, literalElement, MAX_GLOB_WILDCARDS, type GlobElement, type GlobMatcher } from '../../../util/glob-automaton.js';
import { PathOutsideError, type PathSandbox } from '../paths.js';
import { refuse } from './refusal.js';
import type { GlobToken, ShellWord } from './plan.js';

export const MAX_GLOB_MATCHES = 5000;
/**
 * Directory entries one word may read. Expansion runs on the event loop (the policy is
 * synchronous), so its work is bounded: matching is linear-time, and the listings stop here.
 */
export const MAX_GLOB_ENTRIES = 100_000;

/** The word's tokens split at `/`, one list per path segment. */
function segments(tokens: GlobToken[]): GlobToken[][] {
  const out: GlobToken[][] = [[]];
  for (const token of tokens) {
    if (token.kind !== 'literal') {
      (out[out.length - 1] as GlobToken[]).push(token);
      continue;
    }
    const pieces = token.text.split('/');
    pieces.forEach((piece, index) => {
      if (index > 0) out.push([]);
      if (piece !== '') (out[out.length - 1] as GlobToken[]).push({ kind: 'literal', text: piece });
    });
  }
  return out;
}

const isPattern = (segment: GlobToken[]): boolean => segment.some((token) => token.kind !== 'literal');
const literalText = (segment: GlobToken[]): string => segment.map((token) => (token.kind === 'literal' ? token.text : '')).join('');

const ANY = (): boolean => true;

function tokenElements(token: GlobToken): GlobElement[] {
  if (token.kind === 'literal') return [...token.text].map((char) => literalElement(char.codePointAt(0) as number));
  if (token.kind === 'star') return [{ kind: 'many', test: ANY }];
  if (token.kind === 'question') return [{ kind: 'one', test: ANY }];
  const members = new RegExp(`^${token.regex}$`, 'u');
  return [{ kind: 'one', test: (codePoint) => members.test(String.fromCodePoint(codePoint)) }];
}

/** A linear-time matcher for one path segment (a directory entry's name holds no `/`), or for a whole word. */
export const segmentMatcher = (segment: GlobToken[]): GlobMatcher => compileGlobElements(segment.flatMap(tokenElements));

interface Candidate {
  /** Path as the program will receive it (relative words stay relative). */
  shown: string;
  /** Absolute path on disk. */
  absolute: string;
}

/** A match must exist; a pattern ending in `/` matches directories only, as in bash. */
function exists(candidate: Candidate): boolean {
  try {
    if (candidate.shown.endsWith('/')) return statSync(candidate.absolute).isDirectory();
    lstatSync(candidate.absolute);
    return true;
  } catch {
    return false;
  }
}

/** What one word's expansion has read so far, against MAX_GLOB_ENTRIES. */
interface Budget {
  entries: number;
  max: number;
}

/** The next entry, or null at the end or when the directory cannot be read further. */
function nextEntry(dir: Dir): Dirent | null {
  try {
    return dir.readSync();
  } catch {
    return null;
  }
}

/** The names in `directory`, counted against the budget; reading stops as soon as it is spent. */
function readNames(directory: string, budget: Budget, word: ShellWord): string[] {
  let dir: Dir;
  try {
    dir = opendirSync(directory);
  } catch {
    return [];
  }
  const names: string[] = [];
  try {
    for (let entry = nextEntry(dir); entry !== null; entry = nextEntry(dir)) {
      if (++budget.entries > budget.max) refuse(`the glob ${word.source} reads more than ${budget.max} directory entries`);
      names.push(entry.name);
    }
  } finally {
    dir.closeSync();
  }
  return names;
}

/**
 * Walks to `path` physically (`link/..` goes where the kernel would take it), looking only inside
 * the sandbox and along the way to it: a glob must not reveal names outside, nor whether a literal
 * part of it exists there (a match of `x/../../alice/notes` or none would tell what another user has).
 */
function walkInside(path: string, sandbox: PathSandbox, word: ShellWord): string {
  try {
    return sandbox.walk(path);
  } catch {
    throw new PathOutsideError(word.source);
  }
}

/** Lists a directory only when it lies inside the sandbox: a glob must not reveal names outside. */
function listInside(directory: string, sandbox: PathSandbox, word: ShellWord, budget: Budget): string[] {
  const real = walkInside(directory, sandbox, word);
  if (!sandbox.contains(real)) throw new PathOutsideError(word.source);
  return readNames(real, budget, word);
}

function matchSegment(candidates: Candidate[], segment: GlobToken[], sandbox: PathSandbox, word: ShellWord, budget: Budget): Candidate[] {
  const matcher = segmentMatcher(segment);
  // Like bash without dotglob: a leading dot must be matched by a literal dot.
  const dotAllowed = segment[0]?.kind === 'literal' && segment[0].text.startsWith('.');
  const next: Candidate[] = [];
  for (const candidate of candidates) {
    for (const name of listInside(candidate.absolute, sandbox, word, budget).sort()) {
      if ((name.startsWith('.') && !dotAllowed) || !matcher.test(name)) continue;
      next.push({ shown: candidate.shown === '' ? name : join2(candidate.shown, name), absolute: join(candidate.absolute, name) });
      if (next.length > MAX_GLOB_MATCHES) refuse(`the glob ${word.source} matches more than ${MAX_GLOB_MATCHES} paths`);
    }
  }
  return next;
}

/** Joins keeping the text as typed (no normalisation of `./` or `//`). */
const join2 = (left: string, right: string): string => (left.endsWith('/') ? `${left}${right}` : `${left}/${right}`);

/**
 * Pathname expansion as bash does it (no dotglob, no nullglob, no globstar): the matching paths in
 * order, or the word itself when nothing matches. Directories outside the sandbox are never listed.
 * Refused beyond MAX_GLOB_MATCHES matches or `maxEntries` directory entries read.
 */
export function expandGlob(word: ShellWord, cwd: string, sandbox: PathSandbox, maxEntries = MAX_GLOB_ENTRIES): string[] {
  if (word.glob === undefined) return [word.value];
  if (word.glob.filter((token) => token.kind !== 'literal').length > MAX_GLOB_WILDCARDS) {
    refuse(`the glob ${word.source} has more than ${MAX_GLOB_WILDCARDS} wildcards`);
  }
  const parts = segments(word.glob);
  const absolute = isAbsolute(word.value);
  let candidates: Candidate[] = [{ shown: absolute ? '/' : '', absolute: absolute ? '/' : cwd }];
  const budget: Budget = { entries: 0, max: maxEntries };
  parts.forEach((segment, index) => {
    if (absolute && index === 0) return;
    if (isPattern(segment)) {
      candidates = matchSegment(candidates, segment, sandbox, word, budget);
      return;
    }
    const text = literalText(segment);
    candidates = candidates.map((c) => ({
      shown: c.shown === '' ? text : c.shown === '/' ? `/${text}` : `${c.shown}/${text}`,
      absolute: text === '' ? c.absolute : walkInside(`${c.absolute}/${text}`, sandbox, word),
    }));
  });
  const matches = candidates.filter(exists).map((c) => c.shown);
  return matches.length === 0 ? [word.value] : matches;
}
