import { readdirSync, lstatSync, statSync } from 'node:fs';
import { isAbsolute, join } from 'node:path';
import { PathOutsideError, type PathSandbox } from '../paths.js';
import { resolvePhysically } from './path-access.js';
import { refuse } from './refusal.js';
import type { GlobToken, ShellWord } from './plan.js';

export const MAX_GLOB_MATCHES = 5000;

const escapeRegex = (text: string): string => text.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');

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

function segmentRegex(segment: GlobToken[]): RegExp {
  const source = segment
    .map((token) => {
      if (token.kind === 'literal') return escapeRegex(token.text);
      if (token.kind === 'star') return '[^/]*';
      if (token.kind === 'question') return '[^/]';
      return token.regex;
    })
    .join('');
  return new RegExp(`^${source}$`, 'u');
}

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

/** Lists a directory only when it lies inside the sandbox: a glob must not reveal names outside. */
function listInside(directory: string, sandbox: PathSandbox, word: ShellWord): string[] {
  let real: string;
  try {
    real = resolvePhysically(directory, '/');
  } catch {
    throw new PathOutsideError(word.source);
  }
  if (!sandbox.contains(real)) throw new PathOutsideError(word.source);
  try {
    return readdirSync(real);
  } catch {
    return [];
  }
}

function matchSegment(candidates: Candidate[], segment: GlobToken[], sandbox: PathSandbox, word: ShellWord): Candidate[] {
  const regex = segmentRegex(segment);
  // Like bash without dotglob: a leading dot must be matched by a literal dot.
  const dotAllowed = segment[0]?.kind === 'literal' && segment[0].text.startsWith('.');
  const next: Candidate[] = [];
  for (const candidate of candidates) {
    for (const name of listInside(candidate.absolute, sandbox, word).sort()) {
      if ((name.startsWith('.') && !dotAllowed) || !regex.test(name)) continue;
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
 */
export function expandGlob(word: ShellWord, cwd: string, sandbox: PathSandbox): string[] {
  if (word.glob === undefined) return [word.value];
  const parts = segments(word.glob);
  const absolute = isAbsolute(word.value);
  let candidates: Candidate[] = [{ shown: absolute ? '/' : '', absolute: absolute ? '/' : cwd }];
  parts.forEach((segment, index) => {
    if (absolute && index === 0) return;
    if (isPattern(segment)) {
      candidates = matchSegment(candidates, segment, sandbox, word);
      return;
    }
    const text = literalText(segment);
    // Physically, so `link/..` goes where the kernel would take it.
    candidates = candidates.map((c) => ({
      shown: c.shown === '' ? text : c.shown === '/' ? `/${text}` : `${c.shown}/${text}`,
      absolute: text === '' ? c.absolute : resolvePhysically(text, c.absolute),
    }));
  });
  const matches = candidates.filter(exists).map((c) => c.shown);
  return matches.length === 0 ? [word.value] : matches;
}
