import { randomBytes } from 'node:crypto';
import { realpathSync, renameSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { bytePath, fsPath, pathBytes, shownPath } from '../../util/byte-path.js';
import { readRegularFileSync } from '../../util/regular-file.js';
import { createWorkerPool, siblingModule, type WorkerPool } from '../../util/worker-pool.js';
import type { GitlinkTask, GitlinkTaskResult } from './gitlink-worker.js';
import type { PathSandbox } from './paths.js';
import { repositoriesAround } from './protected-files.js';
import { under } from './protected-snapshot.js';

/*
 * A gitlink (an index entry of mode 160000) makes the user's own `git status` or `git diff` in the
 * outer repository run git inside the nested one, obeying that repository's config (its
 * `core.fsmonitor` runs a program) outside the sandbox. The nested repository's config is not
 * protected (only the repositories around the command are), so after each `bash` command a
 * gitlink new in the index of a repository around it, not registered in `.gitmodules` (which is
 * protected), is taken out of the index again.
 *
 * The index, the config and `.gitmodules` are the command's to write: they are read and the index
 * rewritten on a worker thread (gitlink-worker.ts) with a heap limit and a deadline, never on the
 * event loop. An index the worker could not judge in time or memory counts as unreadable.
 *
 * Every path here is a byte string (util/byte-path.ts), handed to the kernel as bytes: a `gitdir:`
 * file may lead to a directory whose name is not UTF-8, which no text path reaches.
 */

/** ctime can lag by a clock tick: an index changed this recently is read again, never trusted by its stat. */
const CLOCK_TICK_MS = 50;
const CACHE_LIMIT = 64;
/** Reading a real index of millions of entries takes a second or two; this is ten times that. */
const DEFAULT_DEADLINE_MS = 20_000;
/** Enough for the names and entries of the largest index read (256 MB); a file made to need more ends its thread. */
const WORKER_HEAP_MB = 1024;
const MAX_SMALL_FILE_BYTES = 1024 * 1024;
/**
 * The names of the gitlinks taken out, over the service's life: past this many characters the
 * ledger stops telling them apart and every unregistered gitlink in a changed index counts as new.
 */
const TAKEN_LIMIT_CHARS = 16 * 1024 * 1024;

type GitlinkPool = WorkerPool<GitlinkTask, GitlinkTaskResult>;

interface Watched {
  tree: string;
  gitDir: string;
  /** Where `gitDir` led before the command: the index is read and written only while it still does. */
  realGitDir: string;
  index: string;
  fingerprint: string | undefined;
  /** undefined: no index, or one this code cannot read. */
  gitlinks: ReadonlySet<string> | undefined;
  head: string;
}

export interface GitlinkReport {
  /** `<index>: <path>` for each gitlink taken out of an index. */
  removed: string[];
  /**
   * Indexes moved aside because this code could not read them after the command changed them, and
   * `<index> (could not be checked: <why>)` for those left as they were (a `.git` replaced by a link).
   */
  unreadable: string[];
  /** Repositories whose HEAD moved in the same command: a commit made then still holds the gitlink. */
  headMoved: string[];
}

function fingerprintOf(path: string): { fingerprint: string; ctimeMs: number } | undefined {
  try {
    const s = statSync(fsPath(path), { bigint: true });
    return { fingerprint: `${s.dev}:${s.ino}:${s.size}:${s.mtimeNs}:${s.ctimeNs}`, ctimeMs: Number(s.ctimeNs / 1_000_000n) };
  } catch {
    return undefined;
  }
}

/** Where HEAD points and that ref's stat: a change means a commit (or checkout) happened. */
function headState(gitDir: string): string {
  // Read without blocking and only if regular: a FIFO named HEAD cannot stop the event loop.
  const head = readRegularFileSync(pathBytes(join(gitDir, 'HEAD')), MAX_SMALL_FILE_BYTES)?.toString('latin1').slice(0, 1024) ?? '';
  const ref = /^ref:\s*(\S+)/.exec(head)?.[1];
  const refStat = ref === undefined ? '' : (fingerprintOf(join(gitDir, ref))?.fingerprint ?? '');
  return `${head}\n${refStat}\n${fingerprintOf(join(gitDir, 'packed-refs'))?.fingerprint ?? ''}`;
}

function realPath(path: string): string | undefined {
  try {
    return realpathSync.native(pathBytes(path), { encoding: 'buffer' }).toString('latin1');
  } catch {
    return undefined;
  }
}

/** PathSandbox.contains for a real path as a byte string: inside a root and not hidden (nor a hard link of a hidden file). */
function writableBy(sandbox: PathSandbox, real: string): boolean {
  const inside = (root: string): boolean => under(root, real);
  if (!sandbox.roots.map(bytePath).some(inside) || sandbox.hiddenPaths.map(bytePath).some(inside)) return false;
  let stats;
  try {
    stats = statSync(pathBytes(real));
  } catch {
    return false;
  }
  return !sandbox.hiddenFilter()(shownPath(real), stats);
}

/**
 * The gitlinks the service took out, per index, for as long as it runs: one taken out is never
 * again counted as already there, though a concurrent run's command may have put it back in the
 * index between another command's before-reading and its own removal. Bounded: once full, no
 * gitlink counts as already there (stricter, never laxer).
 */
class TakenGitlinks {
  private readonly byIndex = new Map<string, Set<string>>();
  private chars = 0;
  private full = false;

  /** Of the gitlinks an index had before a command, those that may stay. */
  kept(index: string, before: ReadonlySet<string>): string[] {
    if (this.full) return [];
    const taken = this.byIndex.get(index);
    return [...before].filter((path) => taken?.has(path) !== true);
  }

  add(index: string, paths: readonly string[]): void {
    if (this.full) return;
    const taken = this.byIndex.get(index) ?? new Set<string>();
    for (const path of paths) {
      if (taken.has(path)) continue;
      taken.add(path);
      this.chars += index.length + path.length;
    }
    this.byIndex.set(index, taken);
    if (this.chars > TAKEN_LIMIT_CHARS) {
      this.full = true;
      this.byIndex.clear();
    }
  }
}

export interface GitlinkGuardOptions {
  /** How long one index may take to read or rewrite (default 20 s); past it the index is unreadable. */
  deadlineMs?: number;
}

/**
 * The service's one guard (in the ToolHost services.ts builds at start-up): the worker pool, the
 * cache of the gitlinks each index had, and the ledger of those taken out. `watch` before each
 * `bash` command, `check` on what it returns after.
 */
export class GitlinkGuard {
  private readonly cache = new Map<string, { fingerprint: string; gitlinks: ReadonlySet<string> }>();
  private readonly taken = new TakenGitlinks();
  /** Rewrites of one index, one after another: two at once would each write back what the other took out. */
  private readonly rewrites = new Map<string, Promise<void>>();
  private readonly pool: GitlinkPool;
  private readonly deadlineMs: number;

  constructor(options: GitlinkGuardOptions = {}) {
    this.deadlineMs = options.deadlineMs ?? DEFAULT_DEADLINE_MS;
    this.pool = createWorkerPool(siblingModule('gitlink-worker', import.meta.url), {
      maxThreads: 2,
      resourceLimits: { maxOldGenerationSizeMb: WORKER_HEAP_MB },
    });
  }

  /**
   * Before a `bash` command: the gitlinks of each index around `cwd` (cached by the index's stat).
   * Only repositories the command can write are watched: a `gitdir:` file may name any directory,
   * DATA_DIR included, and the service must not read or rewrite what the sandbox hides.
   */
  async watch(cwd: string, sandbox: PathSandbox): Promise<GitlinkWatch> {
    const now = Date.now();
    const writable = repositoriesAround(cwd, sandbox.roots).flatMap(({ tree, gitDir }) => {
      const realGitDir = realPath(gitDir);
      return realGitDir !== undefined && writableBy(sandbox, realGitDir) ? [{ tree, gitDir, realGitDir }] : [];
    });
    const watched = await Promise.all(
      writable.map(async ({ tree, gitDir, realGitDir }): Promise<Watched> => {
        const index = join(gitDir, 'index');
        return { tree, gitDir, realGitDir, index, ...(await this.gitlinksAt(gitDir, index, now)), head: headState(gitDir) };
      }),
    );
    return new GitlinkWatch(this, watched, now);
  }

  /** Ends the worker threads (at shutdown). */
  close(): Promise<void> {
    return this.pool.close();
  }

  /** The gitlinks of an index, from the cache when its stat is unchanged and old enough to trust. */
  private async gitlinksAt(gitDir: string, index: string, now: number): Promise<Pick<Watched, 'fingerprint' | 'gitlinks'>> {
    const stat = fingerprintOf(index);
    if (stat === undefined) return { fingerprint: undefined, gitlinks: new Set() };
    const cached = this.cache.get(index);
    if (cached?.fingerprint === stat.fingerprint && stat.ctimeMs < now - CLOCK_TICK_MS) return cached;
    const read = await this.run({ op: 'read', gitDir, index });
    const gitlinks = 'gitlinks' in read ? new Set(read.gitlinks) : undefined;
    if (gitlinks !== undefined && stat.ctimeMs < now - CLOCK_TICK_MS) {
      if (this.cache.size >= CACHE_LIMIT) this.cache.clear();
      this.cache.set(index, { fingerprint: stat.fingerprint, gitlinks });
    }
    return { fingerprint: stat.fingerprint, gitlinks };
  }

  /** Takes new unregistered gitlinks out of one watched index if the command changed it. */
  async checkOne(w: Watched, startedAt: number, report: GitlinkReport): Promise<void> {
    // The command may have moved `.git` away and left a link to another repository in its place
    // (outside the allowed paths, with the same config and hooks so that nothing else noticed):
    // its index is the user's elsewhere, not one this command could write.
    if (realPath(w.gitDir) !== w.realGitDir) throw new Error(`${w.gitDir} no longer leads to the repository it was before the command; left as it is`);
    const stat = fingerprintOf(w.index);
    if (stat === undefined) return;
    // Unchanged, and changed before the command started by more than a tick: nothing to read.
    if (stat.fingerprint === w.fingerprint && stat.ctimeMs < startedAt - CLOCK_TICK_MS) return;
    await this.oneAtATime(w.index, async () => {
      // A fresh name, created exclusively by the worker: a link planted under it must not redirect the write.
      const temporary = `${w.index}.mada-${randomBytes(6).toString('hex')}`;
      const keep = this.taken.kept(w.index, w.gitlinks ?? new Set());
      let result: GitlinkTaskResult;
      try {
        result = await this.run({ op: 'prune', gitDir: w.gitDir, index: w.index, tree: w.tree, keep, temporary });
      } finally {
        rmSync(pathBytes(temporary), { force: true });
      }
      if (!('gitlinks' in result)) {
        if (w.gitlinks === undefined && stat.fingerprint === w.fingerprint) return;
        // A split or sparse index, garbage, or one made to be expensive: git would still read it. Moved aside, kept for the user.
        renameSync(pathBytes(w.index), pathBytes(`${w.index}.unchecked`));
        report.unreadable.push(shownPath(w.index));
        return;
      }
      if (result.gitlinks.length === 0) return;
      this.taken.add(w.index, result.gitlinks);
      report.removed.push(...result.gitlinks.map((path) => shownPath(join(w.tree, path))));
      if (headState(w.gitDir) !== w.head) report.headMoved.push(shownPath(w.tree));
    });
  }

  /** A task on the pool; a thread that ran out of heap or time means an index this code cannot judge. */
  private async run(task: GitlinkTask): Promise<GitlinkTaskResult> {
    try {
      return await this.pool.run(task, AbortSignal.timeout(this.deadlineMs));
    } catch {
      return { unreadable: true };
    }
  }

  private async oneAtATime(index: string, work: () => Promise<void>): Promise<void> {
    const previous = this.rewrites.get(index) ?? Promise.resolve();
    const done = previous.then(work);
    const settled = done.catch(() => undefined);
    this.rewrites.set(index, settled);
    try {
      await done;
    } finally {
      if (this.rewrites.get(index) === settled) this.rewrites.delete(index);
    }
  }
}

/** One `bash` command's watch over the indexes around it. */
export class GitlinkWatch {
  constructor(
    private readonly guard: GitlinkGuard,
    private readonly watched: Watched[],
    private readonly startedAt: number,
  ) {}

  /** After the command: takes new unregistered gitlinks out of each changed index. */
  async check(): Promise<GitlinkReport> {
    const report: GitlinkReport = { removed: [], unreadable: [], headMoved: [] };
    for (const w of this.watched) {
      try {
        await this.guard.checkOne(w, this.startedAt, report);
      } catch (error) {
        report.unreadable.push(`${shownPath(w.index)} (could not be checked: ${(error as Error).message})`);
      }
    }
    return report;
  }
}

/** The tool result's line for a report, in the style of the protected-file restore; empty when nothing happened. */
export function gitlinkNotes(report: GitlinkReport): string[] {
  const notes: string[] = [];
  if (report.removed.length > 0) {
    notes.push(`[nested repositories were added to the git index (gitlinks) and have been removed from it again: ${report.removed.join(', ')}]`);
  }
  if (report.headMoved.length > 0) {
    notes.push(`[HEAD moved in the same command: a commit made then still holds the gitlink (${report.headMoved.join(', ')}); a checkout or reset of it brings it back]`);
  }
  if (report.unreadable.length > 0) {
    notes.push(`[git indexes the command changed could not be checked (one in a form this code cannot read was moved aside to <index>.unchecked): ${report.unreadable.join(', ')}]`);
  }
  return notes;
}
