import { randomBytes } from 'node:crypto';
import { realpathSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { readRegularFileSync } from '../../util/regular-file.js';
import { gitlinksOf, parseIndex, serializeIndex } from './git-index.js';
import type { PathSandbox } from './paths.js';
import { repositoriesAround } from './protected-files.js';

/*
 * A gitlink (an index entry of mode 160000) makes the user's own `git status` or `git diff` in the
 * outer repository run git inside the nested one, obeying that repository's config (its
 * `core.fsmonitor` runs a program) outside the sandbox. The nested repository's config is not
 * protected (only the repositories around the command are), so after each `bash` command a
 * gitlink new in the index of a repository around it, not registered in `.gitmodules` (which is
 * protected), is taken out of the index again.
 */

/** ctime can lag by a clock tick: an index changed this recently is read again, never trusted by its stat. */
const CLOCK_TICK_MS = 50;
const CACHE_LIMIT = 64;
/** An index of millions of entries is this big; beyond it (a sparse file, say) it is not read. */
const MAX_INDEX_BYTES = 256 * 1024 * 1024;
const MAX_SMALL_FILE_BYTES = 1024 * 1024;

/**
 * Every file here is the command's to plant: read without blocking and only if regular, so a FIFO
 * named HEAD or index cannot stop the service's event loop.
 */
const readSmall = (path: string): string | undefined => readRegularFileSync(path, MAX_SMALL_FILE_BYTES)?.toString('latin1');

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

const cache = new Map<string, { fingerprint: string; gitlinks: ReadonlySet<string> }>();
/**
 * Gitlinks this service took out, per index: never counted as already there afterwards, though a
 * concurrent run's command may have put one back in the index between another command's
 * before-reading and its own removal.
 */
const taken = new Map<string, Set<string>>();

function fingerprintOf(path: string): { fingerprint: string; ctimeMs: number } | undefined {
  try {
    const s = statSync(path, { bigint: true });
    return { fingerprint: `${s.dev}:${s.ino}:${s.size}:${s.mtimeNs}:${s.ctimeNs}`, ctimeMs: Number(s.ctimeNs / 1_000_000n) };
  } catch {
    return undefined;
  }
}

const hashBytesOf = (gitDir: string): number => (/^\s*objectformat\s*=\s*sha256\s*$/im.test(readSmall(join(gitDir, 'config')) ?? '') ? 32 : 20);

function readIndex(gitDir: string, index: string): ReturnType<typeof parseIndex> {
  const data = readRegularFileSync(index, MAX_INDEX_BYTES);
  return data === undefined ? undefined : parseIndex(data, hashBytesOf(gitDir));
}

/** The gitlinks of an index, from the cache when its stat is unchanged and old enough to trust. */
function gitlinksAt(gitDir: string, index: string, now: number): { fingerprint: string | undefined; gitlinks: ReadonlySet<string> | undefined } {
  const stat = fingerprintOf(index);
  if (stat === undefined) return { fingerprint: undefined, gitlinks: new Set() };
  const cached = cache.get(index);
  if (cached?.fingerprint === stat.fingerprint && stat.ctimeMs < now - CLOCK_TICK_MS) return cached;
  const parsed = readIndex(gitDir, index);
  const gitlinks = parsed === undefined ? undefined : new Set(gitlinksOf(parsed));
  if (gitlinks !== undefined && stat.ctimeMs < now - CLOCK_TICK_MS) {
    if (cache.size >= CACHE_LIMIT) cache.clear();
    cache.set(index, { fingerprint: stat.fingerprint, gitlinks });
  }
  return { fingerprint: stat.fingerprint, gitlinks };
}

/** Where HEAD points and that ref's stat: a change means a commit (or checkout) happened. */
function headState(gitDir: string): string {
  const head = readSmall(join(gitDir, 'HEAD'))?.slice(0, 1024) ?? '';
  const ref = /^ref:\s*(\S+)/.exec(head)?.[1];
  const refStat = ref === undefined ? '' : (fingerprintOf(join(gitDir, ref))?.fingerprint ?? '');
  return `${head}\n${refStat}\n${fingerprintOf(join(gitDir, 'packed-refs'))?.fingerprint ?? ''}`;
}

/** Paths `.gitmodules` registers (`path = ...`): the user's submodules, which stay. */
function registeredSubmodules(tree: string): Set<string> {
  // latin1, as index paths are read: bytes compare equal whatever their encoding.
  const text = readSmall(join(tree, '.gitmodules')) ?? '';
  return new Set([...text.matchAll(/^\s*path\s*=\s*(.+?)\s*$/gm)].map((m) => (m[1] as string).replace(/^"(.*)"$/, '$1')));
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

export class GitlinkGuard {
  private constructor(
    private readonly watched: Watched[],
    private readonly startedAt: number,
  ) {}

  /**
   * Before a `bash` command: the gitlinks of each index around `cwd` (cached by the index's stat).
   * Only repositories the command can write are watched: a `gitdir:` file may name any directory,
   * DATA_DIR included, and the service must not read or rewrite what the sandbox hides.
   */
  static take(cwd: string, sandbox: PathSandbox): GitlinkGuard {
    const now = Date.now();
    const writable = repositoriesAround(cwd, sandbox.roots).flatMap(({ tree, gitDir }) => {
      const realGitDir = realPath(gitDir);
      return realGitDir !== undefined && sandbox.contains(realGitDir) ? [{ tree, gitDir, realGitDir }] : [];
    });
    const watched = writable.map(({ tree, gitDir, realGitDir }) => {
      const index = join(gitDir, 'index');
      return { tree, gitDir, realGitDir, index, ...gitlinksAt(gitDir, index, now), head: headState(gitDir) };
    });
    return new GitlinkGuard(watched, now);
  }

  /** After the command: takes new unregistered gitlinks out of each changed index. */
  check(): GitlinkReport {
    const report: GitlinkReport = { removed: [], unreadable: [], headMoved: [] };
    for (const w of this.watched) {
      try {
        this.checkOne(w, report);
      } catch (error) {
        report.unreadable.push(`${w.index} (could not be checked: ${(error as Error).message})`);
      }
    }
    return report;
  }

  private checkOne(w: Watched, report: GitlinkReport): void {
    // The command may have moved `.git` away and left a link to another repository in its place
    // (outside the allowed paths, with the same config and hooks so that nothing else noticed):
    // its index is the user's elsewhere, not one this command could write.
    if (realPath(w.gitDir) !== w.realGitDir) throw new Error(`${w.gitDir} no longer leads to the repository it was before the command; left as it is`);
    const stat = fingerprintOf(w.index);
    if (stat === undefined) return;
    // Unchanged, and changed before the command started by more than a tick: nothing to read.
    if (stat.fingerprint === w.fingerprint && stat.ctimeMs < this.startedAt - CLOCK_TICK_MS) return;
    const index = readIndex(w.gitDir, w.index);
    if (index === undefined) {
      if (w.gitlinks === undefined && stat.fingerprint === w.fingerprint) return;
      // A split or sparse index, or garbage: git would still read it. Moved aside, kept for the user.
      renameSync(w.index, `${w.index}.unchecked`);
      report.unreadable.push(w.index);
      return;
    }
    const registered = registeredSubmodules(w.tree);
    const before = w.gitlinks ?? new Set<string>();
    const removedEarlier = taken.get(w.index);
    const added = gitlinksOf(index).filter((path) => (!before.has(path) || removedEarlier?.has(path) === true) && !registered.has(path));
    if (added.length === 0) return;
    const without = new Set(added);
    // A fresh name, created exclusively: a link planted under it must not redirect the write.
    const temporary = `${w.index}.mada-${randomBytes(6).toString('hex')}`;
    try {
      writeFileSync(temporary, serializeIndex(index, without), { mode: statSync(w.index).mode & 0o777, flag: 'wx' });
      renameSync(temporary, w.index);
    } finally {
      rmSync(temporary, { force: true });
    }
    if (taken.size >= CACHE_LIMIT) taken.clear();
    taken.set(w.index, new Set([...(removedEarlier ?? []), ...added]));
    report.removed.push(...added.map((path) => join(w.tree, path)));
    if (headState(w.gitDir) !== w.head) report.headMoved.push(w.tree);
  }
}

function realPath(path: string): string | undefined {
  try {
    return realpathSync(path);
  } catch {
    return undefined;
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
