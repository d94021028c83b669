import type { GlobMatcher } from '../../../util/glob-automaton.js';
import { segmentMatcher } from './glob.js';
import { npmSpellings } from './npm-commands.js';
import type { GlobToken } from './plan.js';

/**
 * The policy expands a glob just before its command starts, against the files there then, which an
 * earlier command of the same line may have made (`touch ./--hard && git reset --h*`). So the rules
 * cannot know the expansion; they read a glob word as each word the rules name that it could
 * become, and ask when that would match.
 */

/** One simple command as the rules see it: argv, and for each word its glob when it has one. */
export interface GlobWord {
  matcher: GlobMatcher;
  /** Could expand to a name starting with `-`, which the program reads as options. */
  optionLike: boolean;
}

/** Beyond this many readings of one command's globs for one rule, it is judged as matching every rule of its program. */
export const MAX_GLOB_READINGS = 256;

export function globWord(tokens: GlobToken[]): GlobWord {
  const first = tokens[0];
  return { matcher: segmentMatcher(tokens), optionLike: first === undefined || first.kind !== 'literal' || first.text.startsWith('-') };
}

/** The words a glob could stand for to match a rule: the rule's own words and, for npm, every spelling npm reads as one. */
export function ruleVocabulary(forms: readonly (readonly string[])[]): string[] {
  const words = new Set(forms.flat());
  const npmWords = new Set(forms.filter((form) => form[0] === 'npm').flatMap((form) => form.slice(1)));
  for (const spelling of npmSpellings(npmWords)) words.add(spelling);
  return [...words];
}

/**
 * Every argv the command could run as far as the rules can tell: each glob word as itself or as a
 * vocabulary word it matches (any option word, when it could start with `-`). Undefined when there
 * would be more than MAX_GLOB_READINGS.
 */
export function globReadings(argv: readonly string[], globs: readonly (GlobWord | undefined)[], vocabulary: readonly string[]): string[][] | undefined {
  let readings: string[][] = [[]];
  for (const [i, word] of argv.entries()) {
    const glob = globs[i];
    const choices = glob === undefined ? [word] : [word, ...vocabulary.filter((v) => (glob.optionLike && v.startsWith('-')) || glob.matcher.test(v))];
    if (readings.length * choices.length > MAX_GLOB_READINGS) return undefined;
    readings = readings.flatMap((reading) => choices.map((choice) => [...reading, choice]));
  }
  return readings;
}
