/**
 * Edits for edit_file's diff preview: benign ones that must come back as a diff the file's text
 * can be rebuilt from, and hostile ones (a model steered by a repository sends them) whose line
 * diff used to hold the event loop for seconds. Each is a file and the whole-file replacement of
 * the text between `head` and `tail` lines.
 */
export interface EditCase {
  name: string;
  /** The text replaced (the file is `head\n` + before + `\ntail\n`). */
  before: () => string;
  after: () => string;
  /** `diff`: a unified diff; `described`: the line saying the change is too large. */
  preview: 'diff' | 'described';
}

const lines = (count: number, line: (i: number) => string): string => Array.from({ length: count }, (_, i) => line(i)).join('\n');

export const EDIT_CORPUS: readonly EditCase[] = [
  { name: 'one word', before: () => 'const a = 1;', after: () => 'const a = 2;', preview: 'diff' },
  { name: 'a function of 60 lines rewritten', before: () => lines(60, (i) => `  old(${i});`), after: () => lines(60, (i) => `  renamed(${i});`), preview: 'diff' },
  { name: 'lines inserted among repeated ones', before: () => lines(300, () => '}'), after: () => lines(310, (i) => (i % 31 ? '}' : '{')), preview: 'diff' },
  { name: 'one long line changed at its end', before: () => `${'x'.repeat(50_000)}a`, after: () => `${'x'.repeat(50_000)}b`, preview: 'diff' },
  // Hostile: jsdiff's Myers diff is quadratic in the lines that differ.
  { name: '15,000 dissimilar lines', before: () => lines(15_000, (i) => `old ${i}`), after: () => lines(15_000, (i) => `new ${i}`), preview: 'described' },
  { name: 'every other line of 200,000 changed', before: () => lines(200_000, (i) => `${i % 10}`), after: () => lines(200_000, (i) => (i % 2 ? 'z' : `${i % 10}`)), preview: 'described' },
  { name: '1,000 short lines become 1,001 different ones', before: () => lines(1_000, (i) => `${i}`), after: () => lines(1_001, (i) => `-${i}`), preview: 'described' },
];
