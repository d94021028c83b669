import { execFileSync } from 'node:child_process';
import { mkdir, mkdtemp, realpath, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createGlobFilesTool } from '../../../src/tools/glob-files.js';
import { createGrepContentTool } from '../../../src/tools/grep-content.js';
import { PathSandbox } from '../../../src/tools/sandbox/paths.js';
import { javascriptBackend } from '../../../src/tools/search/javascript.js';
import type { ToolContext, ToolResult } from '../../../src/tools/tool.js';
import { testSettings } from '../workspace.js';
import { ripgrepBackend } from './backends.js';
import { createToolHost } from '../../../src/tools/tool-host.js';

/**
 * One corpus, every kind of file the backends must agree on, searched by both: the tools must give
 * the very same answer whichever backend runs.
 */
const CORPUS: Record<string, string | Buffer> = {
  // Above the search roots: .ignore reaches every directory below, .gitignore only up to a repository.
  '.gitignore': '*.secret\n',
  '.ignore': '*.outer-ignored\n',
  'plain/a.secret': 'needle in a secret\n',
  'plain/b.outer-ignored': 'needle\n',
  'plain/c.txt': 'needle in plain\n',
  'project/.git/HEAD': 'ref: refs/heads/main\n',
  'project/.git/config': '[core]\n\tneedle = 1\n',
  'project/top.secret': 'needle: the outer .gitignore stops at the repository\n',
  'project/x.outer-ignored': 'needle\n',
  'project/.gitignore': 'build/\n*.log\n!important.log\n/root-only.txt\ndocs/**/*.tmp\nlogs/*\n!logs/keep.txt\n*.cache\n',
  'project/.ignore': 'generated/\n!wanted.cache\n!unwanted.txt\n',
  'project/.rgignore': 'unwanted.txt\n',
  'project/src/main.ts': 'export function main(): void {\n  const needle = find();\n  return needle;\n}\n',
  'project/src/util.ts': 'export const NEEDLE = 42;\nexport const haystack = [];\n',
  'project/src/app.test.ts': "import { main } from './main';\ntest('needle', () => main());\n",
  'project/src/root-only.txt': 'needle: anchored patterns only match at their own level\n',
  'project/src/nested/.gitignore': '*.gen.ts\n!keep.gen.ts\n',
  'project/src/nested/a.gen.ts': 'export const needle = "generated";\n',
  'project/src/nested/keep.gen.ts': 'export const needle = "kept";\n',
  'project/src/nested/deep/b.ts': '\n\nconst needle = 1;\n\n\nconst other = 2;\nconst needle2 = 3;\n',
  'project/root-only.txt': 'needle\n',
  'project/docs/guide.md': '# Guide\n\nFind the needle.\n',
  'project/docs/x.tmp': 'needle\n',
  'project/docs/a/b/y.tmp': 'needle\n',
  'project/logs/a.txt': 'needle\n',
  'project/logs/keep.txt': 'needle kept\n',
  'project/debug.log': 'needle\n',
  'project/important.log': 'needle important\n',
  'project/a.cache': 'needle\n',
  'project/wanted.cache': 'needle wanted\n',
  'project/unwanted.txt': 'needle\n',
  'project/build/out.js': 'const needle = "built";\n',
  'project/generated/g.ts': 'needle\n',
  'project/node_modules/pkg/index.js': 'needle\n',
  'project/.venv/lib/site.py': 'needle\n',
  'project/venv/lib/site.py': 'needle\n',
  'project/pkg/__pycache__/m.pyc': 'needle\n',
  'project/.mypy_cache/x.json': 'needle\n',
  'project/.pytest_cache/v': 'needle\n',
  'project/.github/workflows/ci.yml': 'name: ci # needle\n',
  'project/.env.example': 'NEEDLE=1\n',
  'project/bin/blob.dat': Buffer.concat([Buffer.from('needle\n'), Buffer.from([0, 1, 2, 3])]),
  'project/bin/late.dat': Buffer.concat([Buffer.from('needle early\n'), Buffer.alloc(100_000, 'a'), Buffer.from([0]), Buffer.from('\nneedle late\n')]),
  'project/win.txt': 'needle\r\nsecond needle\r\nno\r\n',
  'project/unicode.txt': '\ufeffnaïve café needle\nΣίσυφος NEEDLE\n🙂 emoji needle\n',
  'project/latin1.txt': Buffer.from([0x63, 0x61, 0x66, 0xe9, 0x20, 0x6e, 0x65, 0x65, 0x64, 0x6c, 0x65, 0x0a]),
  'project/many.txt': 'needle\n'.repeat(600),
  'project/spaces dir/file with spaces.txt': 'needle\n',
  'project/weird:colon.txt': 'needle: colon\n',
  'project/empty.txt': '',
  'project/nested-repo/.git/HEAD': 'ref: refs/heads/main\n',
  'project/nested-repo/x.log': 'needle: the project .gitignore does not reach into another repository\n',
};

let base: string;
let context: ToolContext;
const project = (...parts: string[]): string => join(base, 'project', ...parts);

beforeAll(async () => {
  base = await realpath(await mkdtemp(join(tmpdir(), 'mada-corpus-')));
  for (const [relative, content] of Object.entries(CORPUS)) {
    await mkdir(dirname(join(base, relative)), { recursive: true });
    await writeFile(join(base, relative), content);
  }
  await mkdir(join(base, 'outside'));
  await writeFile(join(base, 'outside', 'leak.txt'), 'needle outside\n');
  await symlink(join(base, 'outside'), project('link-to-outside'));
  await symlink(project('src/main.ts'), project('link-to-main.ts'));
  execFileSync('mkfifo', [project('fifo')]);
  context = {
    workingDir: project(),
    sandbox: new PathSandbox([join(base, 'project'), join(base, 'plain')]),
    settings: testSettings,
    host: createToolHost(),
    signal: new AbortController().signal,
  };
});

afterAll(async () => {
  await rm(base, { recursive: true, force: true });
});

const comparable = (result: ToolResult) => ({ ...result, metadata: { ...result.metadata, backend: undefined } });

async function bothAnswers<P>(make: (backend: typeof javascriptBackend) => { parameters: { parse(v: unknown): P }; execute(p: P, c: ToolContext): Promise<ToolResult> }, args: object) {
  const rg = make(ripgrepBackend);
  const js = make(javascriptBackend);
  return {
    rg: await rg.execute(rg.parameters.parse(args), context),
    js: await js.execute(js.parameters.parse(args), context),
  };
}

const GREP_QUERIES: object[] = [
  { pattern: 'needle' },
  { pattern: 'needle', case_sensitive: false },
  { pattern: 'needle', context_lines: 2 },
  { pattern: 'needle$' },
  { pattern: '^needle' },
  { pattern: '\\bneedle\\b', case_sensitive: false },
  { pattern: 'na.ve caf[eé]' },
  { pattern: 'Σ\\S+' },
  // Look-around makes rg use PCRE2, which skips lines that are not UTF-8 (latin1.txt); see backend.ts.
  { pattern: 'need(?=le)', path: 'src' },
  { pattern: '^$', context_lines: 1 },
  { pattern: 'export (const|function) \\w+' },
  { pattern: 'needle', file_glob: '*.ts' },
  { pattern: 'needle', file_glob: 'src/**/*.ts' },
  { pattern: 'needle', file_glob: '!*.test.ts' },
  { pattern: 'needle', file_glob: '*.{md,yml}' },
  { pattern: 'needle', file_glob: 'src/' },
  { pattern: 'needle', path: 'src' },
  { pattern: 'needle', path: 'src/main.ts' },
  { pattern: 'needle', path: 'bin/late.dat' },
  { pattern: 'needle', path: 'build' },
  { pattern: 'needle', path: 'nested-repo' },
  { pattern: 'needle', path: '../plain' },
  { pattern: 'absent-everywhere' },
];

const GLOB_QUERIES: object[] = [
  { pattern: '**/*' },
  { pattern: '*' },
  { pattern: '**/*.ts' },
  { pattern: 'src/**' },
  { pattern: 'src/*/*.ts' },
  { pattern: '**/*.{md,yml}' },
  { pattern: '.*' },
  { pattern: '**/.*' },
  { pattern: '**/keep*' },
  { pattern: '**/*[0-9]*' },
  { pattern: '**/*', path: 'build' },
  { pattern: '**/*', path: 'logs' },
  { pattern: '**/*', path: '../plain' },
  { pattern: '**/*', limit: 5 },
];

describe('the ripgrep and JavaScript backends give identical answers', () => {
  it.each(GREP_QUERIES)('grep_content %o', async (args) => {
    const { rg, js } = await bothAnswers(createGrepContentTool, args);
    expect(rg.success).toBe(true);
    expect(comparable(js)).toEqual(comparable(rg));
  });

  it.each(GLOB_QUERIES)('glob_files %o', async (args) => {
    const { rg, js } = await bothAnswers(createGlobFilesTool, args);
    expect(rg.success).toBe(true);
    expect(comparable(js)).toEqual(comparable(rg));
  });
});

describe('the corpus answers are the intended ones (so agreement is not agreement on nothing)', () => {
  const listed = async (): Promise<string[]> => {
    const { rg } = await bothAnswers(createGlobFilesTool, { pattern: '**/*', limit: 1000 });
    return rg.data.split('\n').map((path) => path.slice(project().length + 1));
  };

  it('selects files by ignore files, their precedence and their reach', async () => {
    const files = await listed();
    const included = ['important.log', 'logs/keep.txt', 'wanted.cache', 'top.secret', 'src/root-only.txt', 'src/nested/keep.gen.ts', 'nested-repo/x.log', '.github/workflows/ci.yml', '.env.example'];
    const excluded = ['debug.log', 'logs/a.txt', 'a.cache', 'unwanted.txt', 'root-only.txt', 'src/nested/a.gen.ts', 'docs/x.tmp', 'docs/a/b/y.tmp', 'build/out.js', 'generated/g.ts', 'x.outer-ignored'];
    for (const file of included) expect(files).toContain(file);
    for (const file of excluded) expect(files).not.toContain(file);
  });

  it('skips default-ignored directories, links and special files', async () => {
    const files = await listed();
    for (const prefix of ['.git/', 'node_modules/', '.venv/', 'venv/', 'pkg/__pycache__/', '.mypy_cache/', '.pytest_cache/', 'link-to-outside', 'link-to-main.ts', 'fifo']) {
      expect(files.filter((file) => file.startsWith(prefix))).toEqual([]);
    }
  });

  it('skips binary files, reads CRLF lines without the carriage return and cuts at 500 matches', async () => {
    const grep = async (args: object) => (await bothAnswers(createGrepContentTool, args)).rg;
    expect((await grep({ pattern: 'needle', path: 'bin' })).data).toBe(`No matches found for pattern needle in ${project('bin')}`);
    expect((await grep({ pattern: 'needle$', path: 'win.txt' })).data).toBe(`${project('win.txt')}:1: needle\n${project('win.txt')}:2: second needle`);
    expect((await grep({ pattern: 'needle' })).metadata).toMatchObject({ truncated: true, shown_matches: 500 });
  });
});
