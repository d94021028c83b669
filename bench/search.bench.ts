import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createGlobFilesTool } from '../packages/api/src/tools/glob-files.js';
import { createGrepContentTool } from '../packages/api/src/tools/grep-content.js';
import { PathSandbox } from '../packages/api/src/tools/sandbox/paths.js';
import type { FileMatches, SearchBackend } from '../packages/api/src/tools/search/backend.js';
import type { ContentTask } from '../packages/api/src/tools/search/content-worker.js';
import { createJavascriptBackend, javascriptBackend } from '../packages/api/src/tools/search/javascript.js';
import { rootGlob } from '../packages/api/src/tools/search/patterns.js';
import { createRipgrepBackend } from '../packages/api/src/tools/search/ripgrep.js';
import { findExecutable } from '../packages/api/src/tools/search/select.js';
import type { ToolContext } from '../packages/api/src/tools/tool.js';
import { createWorkerPool, siblingModule } from '../packages/api/src/util/worker-pool.js';
import { interleavedMediansMs, medianMs, result, type Bench } from './harness.js';
import { createToolHost } from '../packages/api/src/tools/tool-host.js';
import { walkFiles } from '../packages/api/src/tools/search/walk.js';

const FILES = 30_000;
const PER_DIR = 100;
/** Reused between runs: building 30,000 files takes longer than measuring them. */
const TREE = join(tmpdir(), `mada-bench-search-${FILES}-v1`);
const EXTENSIONS = ['ts', 'py', 'md', 'json'];

function fileContent(i: number, extension: string): string {
  const lines = [`// file ${i}.${extension}`, `export const value${i} = ${i};`, 'function helper(a, b) {', '  return a + b;', '}'];
  // About 1 file in 100 holds the rare identifier the selective query looks for.
  if (i % 97 === 0) lines.push(`const needle_${i} = helper(${i}, 1);`);
  return `${lines.join('\n')}\n`;
}

/** 30,000 small files in 300 directories, a .gitignore'd build directory and a node_modules tree. */
function buildTree(): string {
  if (existsSync(join(TREE, '.complete'))) return TREE;
  rmSync(TREE, { recursive: true, force: true });
  for (let i = 0; i < FILES; i++) {
    const dir = join(TREE, `pkg${Math.floor(i / (PER_DIR * 10))}`, `mod${Math.floor(i / PER_DIR) % 10}`);
    if (i % PER_DIR === 0) mkdirSync(dir, { recursive: true });
    const extension = EXTENSIONS[i % EXTENSIONS.length] as string;
    writeFileSync(join(dir, `file${i}.${extension}`), fileContent(i, extension));
  }
  for (const ignored of ['build', 'node_modules/dep']) {
    mkdirSync(join(TREE, ignored), { recursive: true });
    for (let i = 0; i < 500; i++) writeFileSync(join(TREE, ignored, `gen${i}.ts`), fileContent(i, 'ts'));
  }
  writeFileSync(join(TREE, '.gitignore'), 'build/\n');
  writeFileSync(join(TREE, '.complete'), '');
  return TREE;
}

/** rg run the way a person would from a shell, its output read in full. */
function rawRg(rg: string, args: string[]): () => Promise<void> {
  return () =>
    new Promise((resolve, reject) => {
      const child = spawn(rg, args, { stdio: ['ignore', 'pipe', 'ignore'] });
      child.stdout.on('data', () => undefined);
      child.on('error', reject);
      child.on('close', (code) => (code === 0 || code === 1 ? resolve() : reject(new Error(`rg exited ${code}`))));
    });
}

/**
 * The sandbox as the service builds it: its `.env` in the working directory (protected and hidden)
 * and DATA_DIR hidden, so every file a search finds is checked against them as in the service.
 */
function contextFor(root: string): ToolContext {
  const settings = {} as ToolContext['settings']; // search tools read no settings
  const env = join(root, '.env');
  if (!existsSync(env)) writeFileSync(env, 'LOG_LEVEL=info\n');
  const sandbox = new PathSandbox([root], [env], [env, join(root, 'data')]);
  return { workingDir: root, sandbox, settings, host: createToolHost(), signal: new AbortController().signal };
}

const grepWith = (backend: SearchBackend, context: ToolContext) => async () => {
  const tool = createGrepContentTool(backend);
  const answer = await tool.execute(tool.parameters.parse({ pattern: 'needle_\\d+' }), context);
  if (!answer.success || answer.metadata.match_count !== Math.ceil(FILES / 97)) throw new Error(`grep_content: ${answer.error || 'wrong count'}`);
};

/** The backend's own listing as glob_files asks for it (rg's arguments, its output split and matched), nothing stat'ed or sorted. */
const listWith = (backend: SearchBackend, root: string, pattern = '**/*.ts', total = FILES / EXTENSIONS.length) => async () => {
  let count = 0;
  await backend.listFiles({ root, glob: rootGlob(pattern), signal: new AbortController().signal }, () => count++);
  if (count !== total) throw new Error(`listFiles: ${count} files`);
};

const globWith = (backend: SearchBackend, context: ToolContext, pattern = '**/*.ts', total = FILES / EXTENSIONS.length) => async () => {
  const tool = createGlobFilesTool(backend);
  const answer = await tool.execute(tool.parameters.parse({ pattern }), context);
  if (!answer.success || (answer.metadata.total ?? 0) !== total) throw new Error(`glob_files: ${answer.error || 'wrong count'}`);
};

/** A backtracking regex on this pattern takes time exponential in its stars; the automaton does not. */
const HOSTILE_GLOB = '**/*i*e*e*e*e*e*e*e*e*z';

/** grep_content on the fallback with a pool of its own, so the first search starts the worker. */
const grepInFreshPool = (context: ToolContext) => async () => {
  const pool = createWorkerPool<ContentTask, FileMatches[]>(siblingModule('content-worker', new URL('../packages/api/src/tools/search/javascript.ts', import.meta.url).href), { maxThreads: 1 });
  try {
    await grepWith(createJavascriptBackend(pool), context)();
  } finally {
    await pool.close();
  }
};

/** 30 chains of 8 directories, 100 files at the bottom of each, one .gitignore at the top: most projects' shape. */
const DEEP_TREE = join(tmpdir(), 'mada-bench-search-deep-v1');

function buildDeepTree(): string {
  if (existsSync(join(DEEP_TREE, '.complete'))) return DEEP_TREE;
  rmSync(DEEP_TREE, { recursive: true, force: true });
  mkdirSync(DEEP_TREE, { recursive: true });
  writeFileSync(join(DEEP_TREE, '.gitignore'), 'build/\n');
  for (let d = 0; d < 30; d++) {
    const dir = join(DEEP_TREE, `a${d}`, 'b', 'c', 'd', 'e', 'f', 'g', 'h', 'i');
    mkdirSync(dir, { recursive: true });
    for (let f = 0; f < 100; f++) writeFileSync(join(dir, `f${f}.${f % 2 ? 'ts' : 'md'}`), 'x\n');
  }
  writeFileSync(join(DEEP_TREE, '.complete'), '');
  return DEEP_TREE;
}

/** The least any walk does: read each directory and name each entry. */
async function bareWalk(dir: string): Promise<number> {
  let files = 0;
  const below: Promise<number>[] = [];
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    if (entry.isDirectory()) below.push(bareWalk(`${dir}/${entry.name}`));
    else if (entry.isFile()) files++;
  }
  return (await Promise.all(below)).reduce((sum, n) => sum + n, files);
}

const fallbackWalk = (root: string) => () => walkFiles(root, new AbortController().signal, () => undefined);

const bench: Bench = async () => {
  const rg = findExecutable('rg');
  if (!rg) throw new Error('search bench: rg is not on PATH');
  const root = buildTree();
  const context = contextFor(root);
  const ripgrep = createRipgrepBackend(rg);

  const rawGrep = await medianMs(rawRg(rg, ['-n', 'needle_\\d+', root]), 11, 2);
  const toolGrep = await medianMs(grepWith(ripgrep, context), 11, 2);
  // In turns, so that other work on the machine weighs on both sides alike.
  const { baselineMs: rawGlob, subjectMs: toolGlob } = await interleavedMediansMs(rawRg(rg, ['--files', '-g', '*.ts', root]), globWith(ripgrep, context), 15, 2);
  // The same comparison in two parts: rg's share (the file selection the tools promise) and the newest-first order's.
  const { baselineMs: rawForListing, subjectMs: listing } = await interleavedMediansMs(rawRg(rg, ['--files', '-g', '*.ts', root]), listWith(ripgrep, root), 15, 2);
  const { baselineMs: listingForGlob, subjectMs: globForListing } = await interleavedMediansMs(listWith(ripgrep, root), globWith(ripgrep, context), 15, 2);
  // The same query as glob_files asks it: newest first. rg sorts single-threaded to do it.
  const rawGlobNewest = await medianMs(rawRg(rg, ['--files', '-g', '*.ts', '--sortr', 'modified', root]), 5, 1);
  const jsGrep = await medianMs(grepWith(javascriptBackend, context), 3, 1);
  const jsGlob = await medianMs(globWith(javascriptBackend, context), 3, 1);
  const jsHostileGlob = await medianMs(globWith(javascriptBackend, context, HOSTILE_GLOB, 0), 3, 1);
  const jsColdGrep = await medianMs(grepInFreshPool(context), 3, 0);
  const deep = buildDeepTree();
  const { baselineMs: bareDeep, subjectMs: walkDeep } = await interleavedMediansMs(() => bareWalk(deep), fallbackWalk(deep), 11, 2);

  const tree = `${FILES.toLocaleString('en')} files`;
  return [
    result(`grep_content, ripgrep backend (${tree}, ~310 matches)`, 'rg -n on the same pattern', rawGrep, toolGrep, 1.3),
    result(`glob_files **/*.ts newest first, ripgrep backend (${tree}, 7,500 matches)`, "rg --files -g '*.ts' --sortr modified", rawGlobNewest, toolGlob, 1.3),
    result(
      `glob_files **/*.ts, ripgrep backend, against unsorted rg (${tree})`,
      "rg --files -g '*.ts' (no order)",
      rawGlob,
      toolGlob,
      1.3,
      "measured in turns; the next two rows take it apart: rg's listing with the tools' file selection (ignore files honoured, which rg's -g overrides), and the newest-first order (an lstat per match)",
    ),
    result(
      `ripgrep backend's listing for glob_files **/*.ts, nothing stat'ed (${tree})`,
      "rg --files -g '*.ts' (no order)",
      rawForListing,
      listing,
      undefined,
      'measured in turns; rg with the file selection the tools promise (.gitignore outside a git repository, the default-ignored directories at any depth, a type rather than an overriding -g), on one thread fewer than the cores',
    ),
    result(
      `glob_files **/*.ts, ripgrep backend, against its own listing (${tree})`,
      'the listing above',
      listingForGlob,
      globForListing,
      undefined,
      'measured in turns; the cost of the newest-first order: one lstat per match, the hidden-file check, the heap',
    ),
    result(`grep_content, JavaScript fallback (${tree})`, 'rg -n on the same pattern', rawGrep, jsGrep, undefined, 'used only when rg is not installed'),
    result(`glob_files **/*.ts, JavaScript fallback (${tree})`, "rg --files -g '*.ts'", rawGlob, jsGlob, undefined, 'used only when rg is not installed'),
    result(
      `glob_files ${HOSTILE_GLOB}, JavaScript fallback (${tree})`,
      'glob_files **/*.ts, same backend',
      jsGlob,
      jsHostileGlob,
      undefined,
      'linear-time matching: a pattern that would make a regex backtrack costs no more than a plain one (it matches nothing here, so nothing is stat\'ed)',
    ),
    result(
      'the JavaScript fallback\'s walk, 30 chains of 8 directories with 3,000 files and one .gitignore',
      'a bare walk of the same tree (readdir, each entry named)',
      bareDeep,
      walkDeep,
      3,
      'measured in turns; the ignore rules asked for every entry cost 8-11 times the bare walk when each check built closures and each directory\'s missing ignore files were opened in vain',
    ),
    result(
      `grep_content, JavaScript fallback, first search of a new worker pool (${tree})`,
      'the same search on the warm pool',
      jsGrep,
      jsColdGrep,
      undefined,
      'worker start-up (from source here, through tsx; compiled it is about 150 ms); the service keeps its threads for 60 s after a search',
    ),
  ];
};

export default bench;
