import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CheckpointService } from '../packages/api/src/checkpoints/checkpoint-service.js';
import { interleavedMediansMs, result, type Bench } from './harness.js';

const FILES = 20_000;
const PER_DIR = 100;
/** Reused between runs: building 20,000 files takes longer than measuring them. */
const TREE = join(tmpdir(), `mada-bench-checkpoints-${FILES}-v1`);

const git = (args: string[]): string =>
  execFileSync('git', ['-C', TREE, ...args], { encoding: 'utf8', env: { ...process.env, GIT_CONFIG_GLOBAL: '/dev/null', GIT_CONFIG_NOSYSTEM: '1' } });

/** 20,000 small files in 200 directories, committed to a git repository of their own (for the baseline). */
function buildTree(): string {
  if (existsSync(join(TREE, '.complete'))) return TREE;
  rmSync(TREE, { recursive: true, force: true });
  for (let i = 0; i < FILES; i++) {
    const dir = join(TREE, `pkg${Math.floor(i / (PER_DIR * 10))}`, `mod${Math.floor(i / PER_DIR) % 10}`);
    if (i % PER_DIR === 0) mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, `file${i}.ts`), `export const value${i} = ${i};\n`);
  }
  git(['init', '-q']);
  git(['add', '-A']);
  git(['-c', 'user.name=bench', '-c', 'user.email=bench@localhost', 'commit', '-q', '-m', 'tree']);
  writeFileSync(join(TREE, '.complete'), '');
  return TREE;
}

const bench: Bench = async () => {
  const tree = buildTree();
  const root = mkdtempSync(join(tmpdir(), 'mada-bench-shadow-'));
  const checkpoints = new CheckpointService({ root, maxFileBytes: 10 * 1024 * 1024, excludedPaths: [], log: { warn: () => undefined } });
  const changed = join(tree, 'pkg0', 'mod0', 'file0.ts');
  let n = 0;
  try {
    // The first snapshot of a working directory hashes every file; later ones reuse git's caches.
    await checkpoints.forRun('warm-up', tree).beforeModify();
    // In turns, so that both see the same load on a shared machine.
    const { baselineMs: statusMs, subjectMs: runMs } = await interleavedMediansMs(
      () => git(['status', '--porcelain']),
      async () => {
        const checkpoint = checkpoints.forRun(`run-${n++}`, tree);
        await checkpoint.beforeModify();
        writeFileSync(changed, `export const value0 = ${n};\n`);
        await checkpoint.finish();
      },
      31,
      3,
    );
    return [
      result(
        `checkpoint cost of a run changing 1 file in a ${FILES}-file working directory (both snapshots)`,
        'git status --porcelain',
        statusMs,
        runMs,
        2,
        'Both snapshots: git status on the shadow index (stat and untracked caches); the changed file goes on top of the last tree without starting git (update-index and write-tree once more than 64 files differ from the index).',
      ),
    ];
  } finally {
    writeFileSync(changed, 'export const value0 = 0;\n');
    rmSync(root, { recursive: true, force: true });
  }
};

export default bench;
