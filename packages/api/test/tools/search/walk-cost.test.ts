import { mkdir, mkdtemp, readdir, realpath, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { walkFiles } from '../../../src/tools/search/walk.js';

/**
 * The JavaScript fallback's walk against the least any walk does (read each directory, name each
 * entry), in turns on the same tree: deep directories without ignore files, as in most projects.
 * The walk cost 8 to 11 times the bare walk here (each directory's missing ignore files opened in
 * vain, a closure made per ignore file on each entry's way) and costs 1.3 to 1.8 times now.
 */
const DIRS = 30;
const DEPTH = ['b', 'c', 'd', 'e', 'f', 'g', 'h', 'i'];
const FILES_PER_DIR = 100;
const TURNS = 11;

let root: string;

beforeAll(async () => {
  root = await realpath(await mkdtemp(join(tmpdir(), 'mada-walk-cost-')));
  await writeFile(join(root, '.gitignore'), 'build/\n');
  for (let d = 0; d < DIRS; d++) {
    const dir = join(root, `a${d}`, ...DEPTH);
    await mkdir(dir, { recursive: true });
    await Promise.all(Array.from({ length: FILES_PER_DIR }, (_, f) => writeFile(join(dir, `f${f}.${f % 2 ? 'ts' : 'md'}`), 'x\n')));
  }
});

afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

async function bareWalk(dir: string, onFile: (path: string) => void): Promise<void> {
  const entries = await readdir(dir, { withFileTypes: true });
  const below: Promise<void>[] = [];
  for (const entry of entries) {
    const path = `${dir}/${entry.name}`;
    if (entry.isDirectory()) below.push(bareWalk(path, onFile));
    else if (entry.isFile()) onFile(path);
  }
  await Promise.all(below);
}

async function timed(walk: (onFile: (path: string) => void) => Promise<void>): Promise<{ ms: number; files: number }> {
  let files = 0;
  const start = performance.now();
  await walk(() => files++);
  return { ms: performance.now() - start, files };
}

const median = (values: number[]): number => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] as number;

describe('the JavaScript fallback walk', () => {
  it('costs at most three times a bare directory walk on a deep tree without ignore files below its root', async () => {
    const bare = (onFile: (path: string) => void) => bareWalk(root, onFile);
    const search = (onFile: (path: string) => void) => walkFiles(root, new AbortController().signal, onFile);
    const bareMs: number[] = [];
    const searchMs: number[] = [];
    for (let turn = 0; turn < TURNS + 2; turn++) {
      const a = await timed(bare);
      const b = await timed(search);
      expect(b.files).toBe(a.files); // the same files: nothing below the root is ignored
      if (turn < 2) continue; // warm-up
      bareMs.push(a.ms);
      searchMs.push(b.ms);
    }
    const ratio = median(searchMs) / median(bareMs);
    expect(ratio, `walk ${median(searchMs).toFixed(1)} ms, bare ${median(bareMs).toFixed(1)} ms`).toBeLessThanOrEqual(3);
  });
});
