import { describe, expect, it } from 'vitest';
import { NewestFirst } from '../../../src/tools/search/newest-first.js';

/** The order glob_files promises, by sorting everything: newest first, equal times by path. */
const sortedNewest = (files: readonly [string, number][]): string[] =>
  [...files].sort(([pathA, a], [pathB, b]) => b - a || (pathA < pathB ? -1 : 1)).map(([path]) => path);

/** A small deterministic generator, so a failure can be replayed. */
function* pseudoRandom(seed: number): Generator<number> {
  let state = seed;
  for (;;) {
    state = (state * 1_103_515_245 + 12_345) % 2 ** 31;
    yield state;
  }
}

describe('NewestFirst', () => {
  it('keeps the newest `limit` files in order and counts them all', () => {
    const newest = new NewestFirst(2);
    for (const [path, mtime] of [['a', 1], ['b', 5], ['c', 3], ['d', 4]] as const) newest.add(path, mtime);
    expect(newest.newest()).toEqual(['b', 'd']);
    expect(newest.total).toBe(4);
  });

  it('breaks ties in time by path, whatever order the files come in', () => {
    const names = ['e', 'b', 'd', 'a', 'c'];
    for (const order of [names, [...names].reverse()]) {
      const newest = new NewestFirst(3);
      for (const name of order) newest.add(name, 7);
      expect(newest.newest()).toEqual(['a', 'b', 'c']);
    }
  });

  it.each([1, 3, 100, 5_000])('gives what a full sort gives, limit %i', (limit) => {
    const random = pseudoRandom(limit);
    // Few distinct times, so that many ties are decided by path.
    const files: [string, number][] = Array.from({ length: 2_000 }, (_, i) => [`f${(random.next().value as number) % 100_000}-${i}`, (random.next().value as number) % 50]);
    const newest = new NewestFirst(limit);
    for (const [path, mtime] of files) newest.add(path, mtime);
    expect(newest.newest()).toEqual(sortedNewest(files).slice(0, limit));
    expect(newest.total).toBe(files.length);
  });
});
