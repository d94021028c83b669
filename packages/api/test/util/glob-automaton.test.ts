import { describe, expect, it } from 'vitest';
import { compileGlob } from '../../src/tools/search/glob.js';

/**
 * The automaton against V8's own regular expressions on inputs too short to backtrack for long:
 * for the subset of glob syntax a regex translates in one line, both must agree on every path.
 */
const referenceRegex = (glob: string): RegExp =>
  new RegExp(
    `^${glob.replace(/\*\*\/|\*\*$|\*|\?/g, (piece, offset: number) => {
      const componentStart = offset === 0 || glob[offset - 1] === '/';
      if (piece === '**/') return '(?:.*/)?';
      if (piece === '**') return componentStart ? '.*' : '[^/]*';
      return piece === '*' ? '[^/]*' : '[^/]';
    })}$`,
    's',
  );

/** A deterministic stream of pseudo-random numbers, so a failure can be replayed. */
function numbers(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state * 1103515245 + 12345) % 2 ** 31;
    return state / 2 ** 31;
  };
}

const pick = <T>(random: () => number, choices: readonly T[]): T => choices[Math.floor(random() * choices.length)] as T;

function randomText(random: () => number, alphabet: readonly string[], maxLength: number): string {
  let text = '';
  const length = Math.floor(random() * maxLength);
  for (let i = 0; i < length; i++) text += pick(random, alphabet);
  return text;
}

describe('the linear-time glob matcher', () => {
  it('agrees with a backtracking regex on thousands of random globs and paths', () => {
    const random = numbers(42);
    let compared = 0;
    for (let round = 0; round < 400; round++) {
      let glob = randomText(random, ['a', 'b', '/', '*', '?', '**/'], 8);
      // `**/` counts as recursive only at the start of a component, as the reference assumes.
      if (/[^/]\*\*\//.test(glob) || glob.includes('***')) continue;
      if (glob === '') glob = 'a';
      const ours = compileGlob(glob);
      const theirs = referenceRegex(glob);
      for (let sample = 0; sample < 30; sample++) {
        const path = randomText(random, ['a', 'b', '/'], 12);
        expect(ours.test(path), `${glob} against ${path}`).toBe(theirs.test(path));
        compared++;
      }
    }
    expect(compared).toBeGreaterThan(5000);
  });

  it('stays correct when a pattern meets more state sets than its cache keeps', () => {
    // `*a` then twelve `?`: which of the last thirteen characters were `a` is the state, 2^13 of them.
    const glob = `*a${'?'.repeat(12)}`;
    const random = numbers(7);
    const ours = compileGlob(glob);
    const theirs = referenceRegex(glob);
    for (let sample = 0; sample < 300; sample++) {
      const path = randomText(random, ['a', 'b'], 200);
      expect(ours.test(path), path).toBe(theirs.test(path));
    }
  });

  it('answers at once for patterns that make a backtracking regex run for ages', () => {
    const longPath = `${`${'a'.repeat(60)}/`.repeat(60)}${'a'.repeat(250)}`;
    expect(compileGlob('**/*a*a*a*a*a*a*a*a*a*b').test(longPath)).toBe(false);
    expect(compileGlob('**/*a*a*a*a*a*a*a*a*a*a').test(longPath)).toBe(true);
    expect(compileGlob('{*a*a*a*b,**/*a*a*a*a*c,{a,aa,aaa}*{a,aa,aaa}*{a,aa}*b}').test('a'.repeat(5000))).toBe(false);
  });

  it('matches characters outside the Basic Multilingual Plane as one character', () => {
    expect(compileGlob('?.txt').test('🙂.txt')).toBe(true);
    expect(compileGlob('[🙂x].txt').test('🙂.txt')).toBe(true);
    expect(compileGlob('??.txt').test('🙂.txt')).toBe(false);
  });
});
