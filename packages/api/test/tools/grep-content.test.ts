import { symlink } from 'node:fs/promises';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createGrepContentTool, GREP_MAX_PATTERN_CHARS, grepContentTool } from '../../src/tools/grep-content.js';
import { bothBackends } from './search/backends.js';
import { createWorkspace, type Workspace } from './workspace.js';

let ws: Workspace;
beforeEach(async () => {
  ws = await createWorkspace();
});
afterEach(async () => {
  await ws.remove();
});

interface GrepArgs {
  pattern: string;
  path?: string;
  file_glob?: string;
  context_lines?: number;
  case_sensitive?: boolean;
}

describe.each(bothBackends)('grep_content ($name backend)', (backend) => {
  const tool = createGrepContentTool(backend);
  const grep = (args: GrepArgs) => tool.execute(tool.parameters.parse(args), ws.context());

  it('returns path:line: text lines sorted by path then line', async () => {
    await ws.write('b.py', 'x = 1\ndef b():\n    pass\ndef c():\n');
    await ws.write('a/z.py', 'def a():\n');
    const result = await grep({ pattern: 'def \\w+\\(' });
    expect(result.data).toBe([`${ws.path('a/z.py')}:1: def a():`, `${ws.path('b.py')}:2: def b():`, `${ws.path('b.py')}:4: def c():`].join('\n'));
    expect(result.metadata).toMatchObject({ match_count: 3, file_count: 2, truncated: false, backend: backend.name });
  });

  it('shows context lines as path-N- text and separates groups with --', async () => {
    const path = await ws.write('log.txt', ['a', 'b', 'ERROR one', 'c', 'd', 'e', 'f', 'ERROR two', 'g'].join('\n'));
    const other = await ws.write('z.txt', 'ERROR three\n');
    const result = await grep({ pattern: 'ERROR', context_lines: 1 });
    expect(result.data).toBe(
      [
        `${path}-2- b`,
        `${path}:3: ERROR one`,
        `${path}-4- c`,
        '--',
        `${path}-7- f`,
        `${path}:8: ERROR two`,
        `${path}-9- g`,
        '--',
        `${other}:1: ERROR three`,
      ].join('\n'),
    );
  });

  it('merges overlapping context into one group', async () => {
    const path = await ws.write('t.txt', 'hit\nmid\nhit\nend\n');
    expect((await grep({ pattern: 'hit', context_lines: 2 })).data).toBe([`${path}:1: hit`, `${path}-2- mid`, `${path}:3: hit`, `${path}-4- end`].join('\n'));
  });

  it('is case sensitive unless told otherwise', async () => {
    const path = await ws.write('c.txt', 'Token\ntoken\nTOKEN\n');
    expect((await grep({ pattern: 'token' })).data).toBe(`${path}:2: token`);
    expect((await grep({ pattern: 'token', case_sensitive: false })).metadata).toMatchObject({ match_count: 3 });
  });

  it('filters files with file_glob: a name at any depth, a path from the root, or an exclusion', async () => {
    for (const file of ['main.py', 'pkg/util.py', 'src/app.ts', 'src/app.test.ts', 'lib/app.ts']) await ws.write(file, 'needle\n');
    const files = async (file_glob: string) => (await grep({ pattern: 'needle', file_glob })).data.split('\n').map((line) => line.split(':')[0]);
    expect(await files('*.py')).toEqual([ws.path('main.py'), ws.path('pkg/util.py')]);
    expect(await files('src/**/*.ts')).toEqual([ws.path('src/app.test.ts'), ws.path('src/app.ts')]);
    expect(await files('*.{py,ts}')).toHaveLength(5);
    expect(await files('!*.test.ts')).toEqual(['lib/app.ts', 'main.py', 'pkg/util.py', 'src/app.ts'].map((f) => ws.path(f)));
    expect(await files('src/')).toEqual([ws.path('src/app.test.ts'), ws.path('src/app.ts')]);
  });

  it('returns at most 500 matching lines and says how many there were', async () => {
    await ws.write('a.txt', 'match\n'.repeat(300));
    await ws.write('b.txt', 'match\n'.repeat(300));
    const result = await grep({ pattern: 'match' });
    const lines = result.data.split('\n');
    expect(lines).toHaveLength(501);
    expect(lines[499]).toBe(`${ws.path('b.txt')}:200: match`);
    expect(lines[500]).toBe('(Showing the first 500 of 600 matching lines in 2 files. Narrow the pattern, path or file_glob to see the rest.)');
    expect(result.metadata).toMatchObject({ match_count: 600, shown_matches: 500, truncated: true });
  });

  it('keeps only the after-context of the last shown match when cutting', async () => {
    await ws.write('a.txt', 'match\n'.repeat(499));
    const b = await ws.write('b.txt', 'match\nctx\nctx\nctx\nctx\nmatch\n');
    const lines = (await grep({ pattern: 'match', context_lines: 2 })).data.split('\n');
    expect(lines.slice(-5)).toEqual(['--', `${b}:1: match`, `${b}-2- ctx`, `${b}-3- ctx`, expect.stringContaining('Showing the first 500 of 501')]);
  });

  it('skips binary files, ignored files and dependency directories', async () => {
    await ws.write('.gitignore', 'build/\n');
    const text = await ws.write('src/a.js', 'secret_key\n');
    await ws.write('image.bin', Buffer.concat([Buffer.from('secret_key\n'), Buffer.from([0, 1, 2])]));
    await ws.write('build/out.js', 'secret_key\n');
    await ws.write('node_modules/x/index.js', 'secret_key\n');
    expect((await grep({ pattern: 'secret_key' })).data).toBe(`${text}:1: secret_key`);
  });

  it('searches a single file given as path, and a path relative to the working directory', async () => {
    const path = await ws.write('dir/one.txt', 'alpha\n');
    await ws.write('dir/two.txt', 'alpha\n');
    expect((await grep({ pattern: 'alpha', path: 'dir/one.txt' })).data).toBe(`${path}:1: alpha`);
    expect((await grep({ pattern: 'alpha', path: 'dir' })).metadata).toMatchObject({ match_count: 2 });
  });

  it('cuts very long matching lines', async () => {
    const path = await ws.write('min.js', `${'a'.repeat(1000)}needle${'b'.repeat(1000)}\n`);
    expect((await grep({ pattern: 'needle' })).data).toBe(`${path}:1: ${'a'.repeat(500)} [... line cut at 500 characters]`);
  });

  it('says when nothing matches', async () => {
    await ws.write('a.txt', 'nothing here\n');
    expect(await grep({ pattern: 'absent' })).toMatchObject({ success: true, data: `No matches found for pattern absent in ${ws.root}` });
  });

  it('refuses an empty pattern and an invalid regular expression', async () => {
    expect((await grep({ pattern: '' })).error).toBe('Pattern cannot be empty');
    const invalid = await grep({ pattern: 'foo(' });
    expect(invalid.success).toBe(false);
    expect(invalid.error).toMatch(/^Invalid regex pattern: /);
  });

  it('refuses search paths outside the sandbox and file globs climbing out', async () => {
    await symlink(ws.outside, ws.path('escape'));
    for (const path of [ws.outside, '../outside', ws.path('escape'), `${ws.root}/../outside/secret.txt`, `/proc/self/root${ws.outside}`]) {
      expect(await grep({ pattern: 'secret', path })).toMatchObject({ success: false, error: `Path outside allowed paths: ${path}` });
    }
    expect((await grep({ pattern: 'secret', file_glob: '../outside/*' })).success).toBe(false);
  });

  it('does not follow symbolic links out of the search tree', async () => {
    await symlink(ws.outside, ws.path('escape'));
    await ws.write('inside.txt', 'no secrets\n');
    expect((await grep({ pattern: 'secret' })).data).toBe(`${ws.path('inside.txt')}:1: no secrets`);
  });

  it('reports a missing path', async () => {
    expect((await grep({ pattern: 'x', path: 'nowhere' })).error).toBe('Path not found: nowhere');
  });

  it('stops when the run is cancelled, leaving the report to the agent engine', async () => {
    for (let i = 0; i < 50; i++) await ws.write(`f${i}.txt`, 'needle\n');
    const controller = new AbortController();
    controller.abort(new Error('client gone'));
    await expect(tool.execute(tool.parameters.parse({ pattern: 'needle' }), ws.context({ signal: controller.signal }))).rejects.toThrow();
  });
});

describe('grep_content', () => {
  it('defaults context_lines to 0 and case_sensitive to true, and announces pattern, path and file_glob', () => {
    const params = grepContentTool.parameters.parse({ pattern: 'x' });
    expect(params).toMatchObject({ context_lines: 0, case_sensitive: true });
    expect(grepContentTool.startArgs({ ...params, path: 'src', file_glob: '*.ts' })).toEqual({ pattern: 'x', path: 'src', file_glob: '*.ts' });
    expect(grepContentTool.readOnly).toBe(true);
  });

  it(`refuses a pattern over GREP_MAX_PATTERN_CHARS with a message, and searches one just under it`, async () => {
    const refused = grepContentTool.parameters.safeParse({ pattern: 'é'.repeat(GREP_MAX_PATTERN_CHARS + 1) });
    expect(refused.success).toBe(false);
    expect(refused.error?.issues[0]?.message).toBe(`pattern is longer than ${GREP_MAX_PATTERN_CHARS} characters; search for a shorter one`);
    const ws = await createWorkspace();
    try {
      await ws.write('a.txt', 'needle\n');
      const alternatives = Array.from({ length: 4_000 }, (_, i) => `wörd${i}`).join('|');
      const pattern = `${alternatives}|needle`.slice(-GREP_MAX_PATTERN_CHARS);
      const result = await grepContentTool.execute(grepContentTool.parameters.parse({ pattern: pattern.slice(pattern.indexOf('|') + 1) }), ws.context());
      expect(result.data).toContain('a.txt:1: needle');
    } finally {
      await ws.remove();
    }
  });
});
