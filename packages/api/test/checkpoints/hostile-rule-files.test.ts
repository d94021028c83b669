import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SearchIgnores } from '../../src/checkpoints/search-ignores.js';
import { escapePattern } from '../../src/checkpoints/snapshot-rules.js';

/*
 * A snapshot reads the working directory's ignore files and names its directories in rules, on
 * the event loop: what the directory holds is the agent's or the repository's, and must cost time
 * in proportion to its size, not its square.
 */

let workingDir: string;
beforeEach(() => {
  workingDir = realpathSync(mkdtempSync(join(tmpdir(), 'mada-rule-files-')));
});
afterEach(() => rmSync(workingDir, { recursive: true, force: true }));

/** Runs `work`, and how long it took in milliseconds. */
function timed<T>(work: () => T): { value: T; ms: number } {
  const started = performance.now();
  const value = work();
  return { value, ms: performance.now() - started };
}

describe('rules a snapshot writes from hostile names and files', () => {
  it('escapes a directory name of 100,000 spaces in linear time, trailing spaces as git reads them', () => {
    expect(escapePattern('a  b  ')).toBe('a  b\\ \\ ');
    expect(escapePattern('!x*')).toBe('\\!x\\*');
    const { value, ms } = timed(() => escapePattern(`a${' '.repeat(100_000)}b`));
    expect(value).toHaveLength(100_002);
    expect(ms).toBeLessThan(1000);
  });

  it('reads a .ignore of 50,000 lines (under the 1 MiB it reads) without compiling each one, and still sees its re-including rule', () => {
    const lines = Array.from({ length: 50_000 }, (_, i) => `generated-${i}`);
    mkdirSync(join(workingDir, 'sub'));
    writeFileSync(join(workingDir, 'sub', '.ignore'), `${lines.join('\n')}\n!keep.txt\n`);
    const { value, ms } = timed(() => new SearchIgnores(workingDir, ['sub/.ignore']));
    expect(value.reincluding).toEqual(['sub']);
    expect(value.lines).toHaveLength(50_001);
    expect(ms).toBeLessThan(5000);
  });
});
