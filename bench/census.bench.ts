import { randomUUID } from 'node:crypto';
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ToolContext } from '../packages/api/src/tools/tool.js';
import { createTestDatabase, TEST_DATABASE_URL } from '../packages/api/test/support/databases.js';
import { interleavedMediansMs, overhead, type Bench, type BenchResult } from './harness.js';
import { contextFor, host, runTrue } from './sandbox-support.js';

/** What `bash` adds around each command for the repositories under the allowed paths (repository-census.ts). */
async function censused(context: ToolContext, command: () => Promise<void>): Promise<void> {
  const refusal = await context.host.repositories.admit(context.sandbox);
  if (refusal !== undefined) throw new Error(refusal);
  const guard = await context.host.repositories.watch(context.sandbox);
  await command().finally(async () => {
    const report = await guard.check([]);
    if (report.restored.length + report.removed.length > 0) console.error('the census undid something in an untouched tree');
  });
}

/** 16,000 files in 1,000 directories (16 each, 40 directories per top-level one). */
function largeTree(root: string): void {
  for (let d = 0; d < 1000; d++) {
    const dir = join(root, `d${Math.floor(d / 40)}`, `e${d}`);
    mkdirSync(dir, { recursive: true });
    for (let f = 0; f < 16; f++) writeFileSync(join(dir, `f${f}.txt`), 'x\n');
  }
}

/** 200 repositories side by side, each laid out as `git init` does (config, HEAD, objects, refs, sample hooks). */
function manyRepositories(root: string): void {
  const samples = ['applypatch-msg', 'commit-msg', 'post-update', 'pre-applypatch', 'pre-commit', 'pre-push', 'pre-rebase', 'pre-receive', 'prepare-commit-msg', 'update'];
  for (let r = 0; r < 200; r++) {
    const git = join(root, 'packages', `p${r}`, '.git');
    for (const dir of ['hooks', 'objects/info', 'objects/pack', 'refs/heads', 'refs/tags', 'info']) mkdirSync(join(git, dir), { recursive: true });
    writeFileSync(join(git, 'HEAD'), 'ref: refs/heads/main\n');
    writeFileSync(join(git, 'config'), '[core]\n\trepositoryformatversion = 0\n\tfilemode = true\n\tbare = false\n');
    for (const hook of samples) writeFileSync(join(git, 'hooks', `${hook}.sample`), '#!/bin/sh\nexit 0\n', { mode: 0o755 });
    writeFileSync(join(root, 'packages', `p${r}`, 'index.js'), 'module.exports = 1;\n');
  }
}

async function treeCosts(label: string, fill: (root: string) => void): Promise<BenchResult[]> {
  const root = realpathSync(mkdtempSync(join(tmpdir(), 'mada-bench-census-')));
  try {
    fill(root);
    const open = contextFor(root, false);
    const sandboxed = contextFor(root, true);
    // Nothing cached from an earlier tree or run: the first command's walk as a new service does it.
    host.repositories.forget();
    const first = performance.now();
    await host.repositories.watch(sandboxed.sandbox).then((guard) => guard.check([]));
    const firstMs = performance.now() - first;
    // A check takes a few milliseconds, so many more of them: a median of 31 moved with each burst of other work.
    const census = await interleavedMediansMs(() => undefined, () => censused(sandboxed, () => Promise.resolve()), 301);
    const bare = await interleavedMediansMs(() => runTrue(open, false), () => censused(sandboxed, () => runTrue(sandboxed, true)), 31);
    return [
      overhead(`repository census per bash command, ${label}`, 'nothing', census.baselineMs, census.subjectMs, 1, 5, `the first command's walk of the tree: ${firstMs.toFixed(1)} ms`),
      overhead(`bash true, sandboxed, with the repository census, ${label}`, 'true spawned by the same executor without a sandbox', bare.baselineMs, bare.subjectMs, 1, 15),
    ];
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

/**
 * What a replica on PostgreSQL adds to each `bash` command (census-coordinator.ts): its record made
 * (one statement) and, after the check, removed (one more, which the command does not wait for and
 * which is awaited here to count it). Skipped without TEST_DATABASE_URL.
 */
async function replicaCosts(): Promise<BenchResult[]> {
  if (!TEST_DATABASE_URL) {
    console.log('(replica coordination skipped: set TEST_DATABASE_URL to a PostgreSQL server)');
    return [];
  }
  const database = await createTestDatabase('postgres');
  try {
    const store = database.repository.sandboxActivity!;
    // As CensusCoordinator.command does when no census of another replica is being taken.
    const times = await interleavedMediansMs(
      () => undefined,
      async () => {
        const id = randomUUID();
        await store.register({ id, kind: 'command', roots: ['/srv/bench'], ttlMs: 120_000 }, () => false);
        await store.end(id);
      },
      301,
    );
    return [overhead('replica coordination per bash command (PostgreSQL on loopback)', 'nothing', times.baselineMs, times.subjectMs, 1, 2)];
  } finally {
    await database.drop();
  }
}

/** `npm run bench -- census`: the census alone, and `bash true` with it, on both trees; what replicas add. */
const bench: Bench = async () => [
  ...(await treeCosts('16,000 files in 1,000 directories', largeTree)),
  ...(await treeCosts('200 nested repositories', manyRepositories)),
  ...(await replicaCosts()),
];

export default bench;
