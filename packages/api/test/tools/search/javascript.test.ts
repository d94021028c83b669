import { execFileSync } from 'node:child_process';
import { mkdtemp, realpath, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ContentSearchRequest, FileMatches } from '../../../src/tools/search/backend.js';
import type { ContentTask } from '../../../src/tools/search/content-worker.js';
import { createJavascriptBackend } from '../../../src/tools/search/javascript.js';
import { createWorkerPool, siblingModule } from '../../../src/util/worker-pool.js';

const pool = createWorkerPool<ContentTask, FileMatches[]>(siblingModule('content-worker', new URL('../../../src/tools/search/javascript.ts', import.meta.url).href), {
  maxThreads: 1,
});
const backend = createJavascriptBackend(pool);
let dir: string;

beforeAll(async () => {
  dir = await realpath(await mkdtemp(join(tmpdir(), 'mada-js-search-')));
  await writeFile(join(dir, 'trap.txt'), `${'a'.repeat(40)}!\n`);
  await writeFile(join(dir, 'plain.txt'), 'one needle\ntwo\n');
});

afterAll(async () => {
  await pool.close();
  await rm(dir, { recursive: true, force: true });
});

async function search(pattern: string, signal: AbortSignal, root = dir): Promise<FileMatches[]> {
  const found: FileMatches[] = [];
  const request: ContentSearchRequest = { root, pattern, caseSensitive: true, contextLines: 0, signal };
  await backend.searchContent(request, (matches) => found.push(matches));
  return found;
}

describe('the JavaScript content search', () => {
  it('ends a pattern that backtracks for ever when its signal aborts, and the pool serves the next search', async () => {
    const deadline = new AbortController();
    const searching = search('(a+)+$', deadline.signal);
    setTimeout(() => deadline.abort(new Error('deadline')), 300);
    await expect(searching).rejects.toThrow('The task has been aborted');

    expect(await search('needle', new AbortController().signal)).toEqual([{ path: join(dir, 'plain.txt'), lines: [{ line: 1, text: 'one needle', match: true }] }]);
  });

  it('searches a single file given as the root', async () => {
    const found = await search('two', new AbortController().signal, join(dir, 'plain.txt'));
    expect(found).toEqual([{ path: join(dir, 'plain.txt'), lines: [{ line: 2, text: 'two', match: true }] }]);
  });

  it('refuses an invalid pattern before starting any work', async () => {
    await expect(search('(unclosed', new AbortController().signal)).rejects.toThrow('Invalid regex pattern');
  });

  it('passes over ignore files that are FIFOs instead of waiting on them for ever', async () => {
    const root = await mkdtemp(join(dir, 'fifos-'));
    await writeFile(join(root, 'found.txt'), 'a needle here\n');
    execFileSync('mkfifo', [join(root, '.gitignore'), join(root, '.ignore'), join(root, '.rgignore')]);
    // Four such reads would hold every libuv thread, and with them every file operation of the service.
    const found = await search('needle', AbortSignal.timeout(10_000), root);
    expect(found.map((f) => f.path)).toEqual([join(root, 'found.txt')]);
  });
});
