import { describe, expect, it } from 'vitest';
import { compileGlobElements } from '../../../src/util/glob-automaton.js';
import { compileGlob, fileNameGlob, parseGlob } from '../../../src/tools/search/glob.js';
import { RuleBudget, ruleEntriesAmong } from '../../../src/tools/search/ignore-files.js';
import { IgnoreRuleSet, matchIgnoreRules, parseIgnoreFile, parseIgnoreLine, readIgnoreLine, type IgnoreLine } from '../../../src/tools/search/ignore-rules.js';
import { fileFilterGlob, PatternError, rootGlob } from '../../../src/tools/search/patterns.js';
import { MatchCollector } from '../../../src/tools/search/match-collector.js';

const matches = (glob: string, path: string): boolean => compileGlob(glob).test(path);

describe('globs', () => {
  it.each([
    ['*.ts', 'a.ts', true],
    ['*.ts', 'src/a.ts', false],
    ['**/*.ts', 'a.ts', true],
    ['**/*.ts', 'src/deep/a.ts', true],
    ['src/**', 'src/a/b.ts', true],
    ['src/**', 'src', false],
    ['a/**/b', 'a/b', true],
    ['a/**/b', 'a/x/y/b', true],
    ['?.md', 'a.md', true],
    ['?.md', 'ab.md', false],
    ['[abc].txt', 'b.txt', true],
    ['[!abc].txt', 'b.txt', false],
    ['[!abc].txt', 'd.txt', true],
    ['*.{ts,tsx}', 'a.tsx', true],
    ['*.{ts,tsx}', 'a.js', false],
    ['{src,lib}/**/*.py', 'lib/x/y.py', true],
    ['\\*.txt', '*.txt', true],
    ['\\*.txt', 'a.txt', false],
    ['a**b', 'axxb', true],
    ['a**b', 'a/b', false],
    ['*', '.env', true],
    ['file (1).txt', 'file (1).txt', true],
  ])('%s against %s: %s', (glob, path, expected) => {
    expect(matches(glob, path)).toBe(expected);
  });

  it('refuses a class with a reversed range as a pattern error the agent can fix', () => {
    expect(() => rootGlob('[z-a].txt')).toThrow(new PatternError('Invalid glob pattern [z-a].txt: invalid range z-a in [z-a]'));
    expect(() => fileFilterGlob('*.[z-a]')).toThrow(PatternError);
  });

  it('refuses globs too big to match quickly, which no one writes by hand', () => {
    expect(() => rootGlob('a'.repeat(1025))).toThrow(`Invalid glob pattern ${'a'.repeat(1025)}: longer than 1024 characters`);
    expect(() => rootGlob('*a'.repeat(65))).toThrow('more than 64 wildcards');
    expect(rootGlob('*a'.repeat(64)).matches('a'.repeat(64))).toBe(true);
  });

  it('answers as the automaton does for the shapes it tests without it (literal, **/name, **/*.ext, *.ext)', () => {
    const globs = ['a.ts', 'src/a.ts', '**/a.ts', '**/*.ts', '*.ts', '**/*', '*', '**/', '**/.env', '*.d.ts', '**/*🙂', '**/x\uDC00'];
    const paths = ['', 'a.ts', '.ts', 'ts', 'a/.ts', 'a.ts/', 'src/a.ts', 'x/src/a.ts', 'srca.ts', 'b/a.ts', 'ba.ts', 'a.tsx', 'a.d.ts', 'a/b/c.d.ts', '.env', 'a/.env', 'a.env', '/', 'a/', '🙂', 'a/🙂', 'x\uDC00'];
    for (const glob of globs) {
      const automaton = compileGlobElements(parseGlob(glob));
      for (const path of paths) expect(matches(glob, path), `${glob} against ${path}`).toBe(automaton.test(path));
    }
  });

  it('reads a path by code points also where a literal suffix starts with half of a pair', () => {
    // The path's last two code units are one character (U+1F642); the glob names the lone second half.
    expect(matches('**/*\uDE42', 'a/🙂')).toBe(false);
    expect(matches('*\uDE42', '🙂')).toBe(false);
    expect(matches('**/*🙂', 'a/b🙂')).toBe(true);
  });

  it('finds the glob a file name must match, when there is one', () => {
    expect(fileNameGlob('src/**/*.ts')).toBe('*.ts');
    expect(fileNameGlob('*.{ts,tsx}')).toBe('*.{ts,tsx}');
    expect(fileNameGlob('src/**')).toBeUndefined();
    expect(fileNameGlob('src/{a/b,c}.ts')).toBeUndefined();
  });
});

describe('ignore-file rules', () => {
  const verdict = (text: string, path: string, isDir = false) => matchIgnoreRules(parseIgnoreFile(text), path, isDir);

  it('matches a pattern without a slash at any depth, and one with a slash from the file', () => {
    expect(verdict('*.log', 'debug.log')).toBe('ignore');
    expect(verdict('*.log', 'a/b/debug.log')).toBe('ignore');
    expect(verdict('/build', 'build', true)).toBe('ignore');
    expect(verdict('/build', 'src/build', true)).toBeUndefined();
    expect(verdict('docs/*.tmp', 'docs/x.tmp')).toBe('ignore');
    expect(verdict('docs/*.tmp', 'other/docs/x.tmp')).toBeUndefined();
  });

  it('applies a trailing slash to directories only', () => {
    expect(verdict('out/', 'out', true)).toBe('ignore');
    expect(verdict('out/', 'out', false)).toBeUndefined();
  });

  it('lets the last matching rule win, negations included', () => {
    expect(verdict('*.log\n!keep.log', 'keep.log')).toBe('whitelist');
    expect(verdict('!keep.log\n*.log', 'keep.log')).toBe('ignore');
  });

  it('judges a path on its own, not by its parent directories', () => {
    expect(verdict('build', 'build/out.js')).toBeUndefined();
    expect(verdict('build/**', 'build/out.js')).toBe('ignore');
  });

  it('skips a line it cannot read and keeps the others, as ripgrep does', () => {
    expect(verdict('[z-a]\n*.log\n', 'debug.log')).toBe('ignore');
    expect(parseIgnoreFile('[z-a]\n*.log\n').size).toBe(1);
  });

  it('skips comments and blanks, trims trailing spaces unless escaped, and reads escapes', () => {
    expect(parseIgnoreFile('# comment\n\n   \n').size).toBe(0);
    expect(verdict('a.txt   ', 'a.txt')).toBe('ignore');
    expect(verdict('\\#hash', '#hash')).toBe('ignore');
    expect(verdict('\\!bang', '!bang')).toBe('ignore');
    expect(parseIgnoreLine('trailing\\ ')?.glob.test('trailing ')).toBe(true);
  });
});

describe('ignore-file rules without wildcards', () => {
  const verdict = (text: string, path: string, isDir = false) => matchIgnoreRules(parseIgnoreFile(text), path, isDir);

  it('are looked up, yet the last matching rule still wins over wildcard rules either side', () => {
    expect(verdict('!*.log\ndebug.log', 'debug.log')).toBe('ignore');
    expect(verdict('debug.log\n!*.log', 'a/debug.log')).toBe('whitelist');
    expect(verdict('*.log\n!keep.log\n*.txt', 'keep.log')).toBe('whitelist');
  });

  it('keep directory-only rules to directories while a later or earlier rule decides files', () => {
    expect(verdict('!out\nout/', 'out', true)).toBe('ignore');
    expect(verdict('!out\nout/', 'out', false)).toBe('whitelist');
    expect(verdict('out/\n!out', 'out', true)).toBe('whitelist');
    expect(verdict('out/', 'x/out', false)).toBeUndefined();
  });

  it('match a name at any depth, and a path only from the file', () => {
    expect(verdict('name.txt', 'a/b/name.txt')).toBe('ignore');
    expect(verdict('a/b', 'a/b')).toBe('ignore');
    expect(verdict('a/b', 'x/a/b')).toBeUndefined();
    expect(verdict('/top', 'sub/top')).toBeUndefined();
    expect(verdict('**/a/b', 'x/y/a/b')).toBe('ignore');
    expect(verdict('**/a/b', 'a/b')).toBe('ignore');
  });

  it('do not count as wildcard rules, which are the costly ones', () => {
    const rules = parseIgnoreFile('a\n/b/c\n**/d\n*.e\nf[0-9]\n');
    expect(rules.size).toBe(5);
    expect(rules.globCount).toBe(2);
  });
});

describe('the ignore files a directory listing names', () => {
  it('are the ones a walk opens, whatever their case, since a case-insensitive file system opens them so', () => {
    const listing = ['.gitignore', '.IGNORE', '.Git', '.rgignore.bak', 'gitignore', '.gitignores', 'src', '.env'].map((name) => ({ name }));
    expect([...ruleEntriesAmong(listing)].sort()).toEqual(['.git', '.gitignore', '.ignore']);
  });
});

describe('the limits on ignore rules', () => {
  const limits = { globsPerFile: 2, globsPerWalk: 3, rulesPerFile: 4, rulesPerWalk: 6 };
  const fill = (budget: RuleBudget, lines: string[]): IgnoreRuleSet => {
    const rules = new IgnoreRuleSet();
    for (const raw of lines) {
      const line = readIgnoreLine(raw) as IgnoreLine;
      if (!budget.take(line, rules)) break;
      rules.add(line);
    }
    return rules;
  };

  it('stop a file at its own limits on wildcard rules and on all rules', () => {
    expect(fill(new RuleBudget(limits), ['*.a', '*.b', '*.c']).size).toBe(2);
    expect(fill(new RuleBudget(limits), ['a', 'b', 'c', 'd', 'e']).size).toBe(4);
  });

  it('stop the files of one walk at the limits of the walk', () => {
    const budget = new RuleBudget(limits);
    expect(fill(budget, ['*.a', '*.b', 'x']).size).toBe(3);
    expect(fill(budget, ['*.c', '*.d']).size).toBe(1);
    expect(fill(budget, ['y', 'z', 'w']).size).toBe(2);
  });
});

describe('match collector', () => {
  const file = (path: string, lines: number[]) => ({ path, lines: lines.map((line) => ({ line, text: `t${line}`, match: true })) });

  it('keeps the first matches by path whatever order the files arrive in', () => {
    const files = [file('/c', [1, 2, 3]), file('/a', [1, 2]), file('/b', [5, 6, 7])];
    const collect = (order: typeof files) => {
      const collector = new MatchCollector(4);
      for (const f of order) collector.add(f);
      return collector.result(0);
    };
    const forward = collect(files);
    expect(collect([...files].reverse())).toEqual(forward);
    expect(forward.files.map((f) => [f.path, f.lines.map((l) => l.line)])).toEqual([
      ['/a', [1, 2]],
      ['/b', [5, 6]],
    ]);
    expect(forward).toMatchObject({ totalMatches: 8, totalFiles: 3, shownMatches: 4 });
  });
});
