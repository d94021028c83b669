import { mkdir, mkdtemp, realpath, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FileMatches } from '../../../src/tools/search/backend.js';
import type { ContentTask } from '../../../src/tools/search/content-worker.js';
import { createJavascriptBackend } from '../../../src/tools/search/javascript.js';
import { createWorkerPool, siblingModule } from '../../../src/util/worker-pool.js';
import { sampleEventLoop } from '../sandbox/red-team/support.js';
import { collectWarnings, hugeIgnoreFile } from './large-ignore-files.js';

/** Longest the event loop may be held (in main-thread CPU time) while the search runs. */
const MAX_STALL_MS = 100;

const pool = createWorkerPool<ContentTask, FileMatches[]>(siblingModule('content-worker', new URL('../../../src/tools/search/javascript.ts', import.meta.url).href), {
  maxThreads: 1,
});
const backend = createJavascriptBackend(pool);
let root: string;

const FILES: Record<string, string> = {
  'app.ts': 'needle\n',
  'debug.log': 'needle\n',
  'keep.log': 'needle\n',
  'build/out.js': 'needle\n',
  'notes.md': 'needle\n',
  'src/notes.md': 'needle\n',
  'src/main.ts': 'needle\n',
  'late-rule.txt': 'needle\n',
};

beforeAll(async () => {
  root = await realpath(await mkdtemp(join(tmpdir(), 'mada-ignore-files-')));
  for (const [path, content] of Object.entries(FILES)) {
    await mkdir(dirname(join(root, path)), { recursive: true });
    await writeFile(join(root, path), content);
  }
  await writeFile(join(root, '.gitignore'), hugeIgnoreFile(['*.log', 'build/', '!keep.log', 'notes.md'], 'late-rule.txt'));
});

afterAll(async () => {
  await pool.close();
  await rm(root, { recursive: true, force: true });
});

const relative = (paths: readonly string[]): string[] => paths.map((path) => path.slice(root.length + 1)).sort();
/**
 * What the rules before the limit leave: one wildcard rule and three literal ones, then 499 generated
 * wildcard rules reach the limit of 500 per file at line 504; `late-rule.txt` is named only after
 * it, so it stays visible.
 */
const EXPECTED = ['.gitignore', 'app.ts', 'keep.log', 'late-rule.txt', 'src/main.ts'];

describe('a 16 MiB .gitignore of 52,000 distinct wildcard rules, searched without ripgrep', () => {
  it('lists files without holding the event loop, applying the rules up to the limit and warning about the rest', async () => {
    const { value, warnings } = await collectWarnings(() =>
      sampleEventLoop(async () => {
        const found: string[] = [];
        await backend.listFiles({ root, signal: AbortSignal.timeout(120_000) }, (path) => found.push(path));
        return found;
      }),
    );
    expect(value.longestStallMs, 'the event loop was held').toBeLessThan(MAX_STALL_MS);
    expect(relative(value.value)).toEqual(EXPECTED);
    const limited = warnings.filter((warning) => (warning as Error & { code?: string }).code === 'MADA_IGNORE_RULES_LIMITED');
    expect(limited).toHaveLength(1);
    expect(limited[0]?.message).toContain(`${root}/.gitignore: rules from line 504 on are not applied`);
  }, 180_000);

  it('searches contents without holding the event loop, with the same files', async () => {
    const { value, longestStallMs } = await sampleEventLoop(async () => {
      const found: string[] = [];
      const request = { root, pattern: 'needle', caseSensitive: true, contextLines: 0, signal: AbortSignal.timeout(120_000) };
      await backend.searchContent(request, (matches) => found.push(matches.path));
      return found;
    });
    expect(longestStallMs, 'the event loop was held').toBeLessThan(MAX_STALL_MS);
    expect(relative(value)).toEqual(EXPECTED.filter((path) => path !== '.gitignore'));
  }, 180_000);
});
