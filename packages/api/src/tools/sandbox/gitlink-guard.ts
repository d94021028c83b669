import { readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gitlinksOf, parseIndex, serializeIndex } from './git-index.js';
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

interface Watched {
  tree: string;
  gitDir: string;
  index: string;
  fingerprint: string | undefined;
  /** undefined: no index, or one this code cannot read. */
  gitlinks: ReadonlySet<string> | undefined;
  head: string;
}

const cache = new Map<string, { fingerprint: string; gitlinks: ReadonlySet<string> }>();

function fingerprintOf(path: string): { fingerprint: string; ctimeMs: number } | undefined {
  try {
    const s = statSync(path, { bigint: true });
    return { fingerprint: `${s.dev}:${s.ino}:${s.size}:${s.mtimeNs}:${s.ctimeNs}`, ctimeMs: Number(s.ctimeNs / 1_000_000n) };
  } catch {
    return undefined;
  }
}

function hashBytesOf(gitDir: string): number {
  try {
    return /^\s*objectformat\s*=\s*sha256\s*$/im.test(readFileSync(join(gitDir, 'config'), 'utf8')) ? 32 : 20;
  } catch {
    return 20;
  }
}

function readIndex(gitDir: string, index: string): ReturnType<typeof parseIndex> {
  try {
    return parseIndex(readFileSync(index), hashBytesOf(gitDir));
  } catch {
    return undefined;
  }
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
  try {
    const head = readFileSync(join(gitDir, 'HEAD'), 'utf8').slice(0, 1024);
    const ref = /^ref:\s*(\S+)/.exec(head)?.[1];
    const refStat = ref === undefined ? '' : (fingerprintOf(join(gitDir, ref))?.fingerprint ?? '');
    return `${head}\n${refStat}\n${fingerprintOf(join(gitDir, 'packed-refs'))?.fingerprint ?? ''}`;
  } catch {
    return '';
  }
}

/** Paths `.gitmodules` registers (`path = ...`): the user's submodules, which stay. */
function registeredSubmodules(tree: string): Set<string> {
  try {
    // latin1, as index paths are read: bytes compare equal whatever their encoding.
    const text = readFileSync(join(tree, '.gitmodules'), 'latin1');
    return new Set([...text.matchAll(/^\s*path\s*=\s*(.+?)\s*$/gm)].map((m) => (m[1] as string).replace(/^"(.*)"$/, '$1')));
  } catch {
    return new Set();
  }
}

export interface GitlinkReport {
  /** `<index>: <path>` for each gitlink taken out of an index. */
  removed: string[];
  /** Indexes moved aside because this code could not read them after the command changed them. */
  unreadable: string[];
  /** Repositories whose HEAD moved in the same command: a commit made then still holds the gitlink. */
  headMoved: string[];
}

export class GitlinkGuard {
  private constructor(
    private readonly watched: Watched[],
    private readonly startedAt: number,
  ) {}

  /** Before a `bash` command: the gitlinks of each index around `cwd` (cached by the index's stat). */
  static take(cwd: string, roots: readonly string[]): GitlinkGuard {
    const now = Date.now();
    const watched = repositoriesAround(cwd, roots).map(({ tree, gitDir }) => {
      const index = join(gitDir, 'index');
      return { tree, gitDir, index, ...gitlinksAt(gitDir, index, now), head: headState(gitDir) };
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
    const added = gitlinksOf(index).filter((path) => !before.has(path) && !registered.has(path));
    if (added.length === 0) return;
    const without = new Set(added);
    const temporary = `${w.index}.mada-${process.pid}`;
    writeFileSync(temporary, serializeIndex(index, without), { mode: statSync(w.index).mode & 0o777 });
    renameSync(temporary, w.index);
    report.removed.push(...added.map((path) => join(w.tree, path)));
    if (headState(w.gitDir) !== w.head) report.headMoved.push(w.tree);
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
    notes.push(`[git indexes were changed into a form that cannot be checked and have been moved aside (<index>.unchecked): ${report.unreadable.join(', ')}]`);
  }
  return notes;
}
