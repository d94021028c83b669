import { link, mkdir, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createGlobFilesTool, globFilesTool } from '../../src/tools/glob-files.js';
import { PathSandbox } from '../../src/tools/sandbox/paths.js';
import { bothBackends } from './search/backends.js';
import { createWorkspace, type Workspace } from './workspace.js';

let ws: Workspace;
beforeEach(async () => {
  ws = await createWorkspace();
});
afterEach(async () => {
  await ws.remove();
});

describe.each(bothBackends)('glob_files ($name backend)', (backend) => {
  const tool = createGlobFilesTool(backend);
  const glob = (args: { pattern: string; path?: string; limit?: number }) => tool.execute(tool.parameters.parse(args), ws.context());

  it('lists absolute paths, most recently modified first', async () => {
    await ws.write('old.py', '', 1_000_000);
    await ws.write('pkg/newest.py', '', 3_000_000);
    await ws.write('pkg/mid.py', '', 2_000_000);
    const result = await glob({ pattern: '**/*.py' });
    expect(result.data).toBe([ws.path('pkg/newest.py'), ws.path('pkg/mid.py'), ws.path('old.py')].join('\n'));
    expect(result.metadata).toMatchObject({ count: 3, total: 3, truncated: false, backend: backend.name });
  });

  it('orders files with the same modification time by path', async () => {
    for (const name of ['c.txt', 'a.txt', 'b.txt']) await ws.write(name, '', 1_700_000_000);
    expect((await glob({ pattern: '*.txt' })).data).toBe(['a.txt', 'b.txt', 'c.txt'].map((n) => ws.path(n)).join('\n'));
  });

  it('reads * within one directory and ** across directories', async () => {
    await ws.write('top.md', '', 2);
    await ws.write('docs/deep/guide.md', '', 1);
    expect((await glob({ pattern: '*.md' })).data).toBe(ws.path('top.md'));
    expect((await glob({ pattern: '**/*.md' })).data).toBe([ws.path('top.md'), ws.path('docs/deep/guide.md')].join('\n'));
    expect((await glob({ pattern: 'docs/**/*.{md,rst}' })).data).toBe(ws.path('docs/deep/guide.md'));
  });

  it('returns 100 files by default and says how many matched', async () => {
    for (let i = 0; i < 120; i++) await ws.write(`f${String(i).padStart(3, '0')}.log`, '', 1_000_000 + i);
    const result = await glob({ pattern: '*.log' });
    const lines = result.data.split('\n');
    expect(lines).toHaveLength(101);
    expect(lines[0]).toBe(ws.path('f119.log'));
    expect(lines.at(-1)).toBe('(120 files match; showing the 100 most recently modified. Narrow the pattern or path to see the others.)');
    expect(result.metadata).toMatchObject({ count: 100, total: 120, truncated: true });
  });

  it('honours a smaller limit', async () => {
    for (let i = 0; i < 5; i++) await ws.write(`f${i}.txt`, '', 1_000_000 + i);
    const result = await glob({ pattern: '*.txt', limit: 2 });
    expect(result.data).toBe(`${ws.path('f4.txt')}\n${ws.path('f3.txt')}\n(5 files match; showing the 2 most recently modified. Narrow the pattern or path to see the others.)`);
  });

  it('searches a path given relative to the working directory', async () => {
    await ws.write('src/a.ts', '');
    await ws.write('test/b.ts', '');
    expect((await glob({ pattern: '**/*.ts', path: 'src' })).data).toBe(ws.path('src/a.ts'));
  });

  it('honours .gitignore and .ignore, and skips dependency and cache directories', async () => {
    await ws.write('.gitignore', 'dist/\n*.log\n!keep.log\n');
    await ws.write('.ignore', 'generated/\n');
    for (const file of ['src/app.js', 'dist/app.js', 'debug.log', 'keep.log', 'generated/x.js', 'node_modules/lib/index.js', '.venv/lib/site.py', 'pkg/__pycache__/m.pyc']) {
      await ws.write(file, '', 1);
    }
    const result = await glob({ pattern: '**/*' });
    expect(result.data.split('\n').sort()).toEqual(['.gitignore', '.ignore', 'keep.log', 'src/app.js'].map((f) => ws.path(f)).sort());
  });

  it('lists hidden files', async () => {
    await ws.write('.github/workflows/ci.yml', '');
    expect((await glob({ pattern: '**/*.yml' })).data).toBe(ws.path('.github/workflows/ci.yml'));
  });

  it('does not follow symbolic links', async () => {
    await ws.write('real/file.txt', '');
    await symlink(ws.outside, ws.path('outside-link'));
    await symlink(ws.path('real'), ws.path('inside-link'));
    await symlink(ws.path('real/file.txt'), ws.path('file-link.txt'));
    expect((await glob({ pattern: '**/*.txt' })).data).toBe(ws.path('real/file.txt'));
  });

  it("never lists the service's .env, another name of it or a file under DATA_DIR", async () => {
    const env = await ws.write('.env', 'API_KEYS=u:k\n');
    await ws.write('data/mada.db', '');
    await ws.write('src/app.ts', '');
    await link(env, ws.path('src/innocent.txt'));
    const sandbox = new PathSandbox([ws.root], [env], [env, ws.path('data')]);
    const result = await tool.execute(tool.parameters.parse({ pattern: '**/*' }), ws.context({ sandbox }));
    expect(result.data).toBe(ws.path('src/app.ts'));
  });

  it('says when nothing matches', async () => {
    await ws.write('a.txt', '');
    expect(await glob({ pattern: '**/*.rs' })).toMatchObject({ success: true, data: `No files found matching **/*.rs in ${ws.root}` });
  });

  it('accepts an absolute pattern inside the search path', async () => {
    await ws.write('src/a.ts', '');
    expect((await glob({ pattern: `${ws.root}/src/*.ts` })).data).toBe(ws.path('src/a.ts'));
    expect((await glob({ pattern: '/etc/*.conf' })).error).toBe(`Pattern must be relative to path (${ws.root}): /etc/*.conf`);
  });

  it('refuses patterns that climb out with ..', async () => {
    expect((await glob({ pattern: '../outside/*' })).error).toBe("Pattern may not contain '..': ../outside/* (pass another path instead)");
    expect((await glob({ pattern: 'src/../../*' })).success).toBe(false);
  });

  it('refuses search paths outside the sandbox', async () => {
    await symlink(ws.outside, ws.path('escape'));
    for (const path of [ws.outside, '../outside', ws.path('escape'), `/proc/self/root${ws.outside}`]) {
      expect(await glob({ pattern: '*', path })).toMatchObject({ success: false, error: `Path outside allowed paths: ${path}` });
    }
  });

  it('stops when the run is cancelled, leaving the report to the agent engine', async () => {
    await ws.write('a.txt', '');
    const controller = new AbortController();
    controller.abort(new Error('client gone'));
    await expect(tool.execute(tool.parameters.parse({ pattern: '*' }), ws.context({ signal: controller.signal }))).rejects.toThrow();
  });

  it('reports a missing path and a path that is a file', async () => {
    await ws.write('file.txt', '');
    expect((await glob({ pattern: '*', path: 'nope' })).error).toBe('Path not found: nope');
    expect((await glob({ pattern: '*', path: 'file.txt' })).error).toBe('Not a directory: file.txt');
  });
});

describe('glob_files', () => {
  it('defaults limit to 100 and announces pattern and path', () => {
    const params = globFilesTool.parameters.parse({ pattern: '*.ts' });
    expect(params.limit).toBe(100);
    expect(globFilesTool.startArgs({ pattern: '*.ts', path: 'src', limit: 100 })).toEqual({ pattern: '*.ts', path: 'src' });
    expect(globFilesTool.readOnly).toBe(true);
  });

  it('uses the default backend when none is forced', async () => {
    const ws2 = await createWorkspace();
    try {
      await mkdir(join(ws2.root, 'a'));
      await writeFile(join(ws2.root, 'a', 'x.ts'), '');
      const result = await globFilesTool.execute(globFilesTool.parameters.parse({ pattern: '**/*.ts' }), ws2.context());
      expect(result.data).toBe(join(ws2.root, 'a', 'x.ts'));
      expect(result.metadata.backend).toBe('ripgrep');
    } finally {
      await ws2.remove();
    }
  });
});
