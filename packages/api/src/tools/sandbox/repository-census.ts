import { chmodSync, lstatSync, readdirSync, readlinkSync, realpathSync, type Stats } from 'node:fs';
import { dirname, isAbsolute, join } from 'node:path';
import { bytePath, fsPath, isPrintableAscii, pathBytes, shownPath } from '../../util/byte-path.js';
import { readRegularFilePrefixSync, readRegularFileWithStatsSync } from '../../util/regular-file.js';
import { filterRepositoryConfig, MAX_CONFIG_BYTES } from './git-config-filter.js';
import type { PathSandbox } from './paths.js';
import { CensusCoordinator, SandboxCoordinationRefusal, type CoordinationWait } from './census-coordinator.js';
import { isPutBackTemporary, putBytes, same, under as inside, type Entry } from './protected-snapshot.js';

/*
 * Every git repository under the allowed paths, not only the ones around the command's directory:
 * a sibling `r3/.git/hooks/pre-commit`, a nested `vendor/lib/.git/config` or a repository an
 * interpreter makes runs its hooks and config the next time the user uses git there, outside any
 * sandbox. They are not bound read-only (a command may delete or move its own checkout of a
 * nested project); instead, after each `bash` command:
 *
 * - a repository known before (the census) whose config, hooks or commondir the command changed
 *   gets them back;
 * - a repository new since then keeps only what git itself writes (git-config-filter.ts) and no
 *   hook but git's inert `*.sample` files, unless its config and hooks are the very files of a
 *   repository known before (the same inode and bytes: a checkout moved or renamed).
 *
 * What changed during the command is told from what changed before it by ctime, which no process
 * can set: a change older than the earliest command still running is the user's, taken as it is.
 * The tree is walked by directory, and a directory's listing is kept while its ctime is unchanged,
 * so a command that makes no directory pays one lstat per directory of the tree, and three per
 * repository (its git directory, `config`, `hooks`) plus one per hook that is not a sample.
 *
 * Every path here is a byte string (util/byte-path.ts), handed to the kernel as a Buffer: a name
 * that is not UTF-8 has no text path that reaches it, and a repository below one would otherwise
 * be missed. Paths turn into text only for the report.
 *
 * A tree bigger than the cap fails closed: the first census stops at the cap and `bash` is refused
 * there (admit); the check after a command walks the whole tree whatever its size, so nothing a
 * command planted past the cap is missed, and then `bash` is refused until the tree is back under it.
 */

/** A ctime within this of a moment may belong to a change made just after it (coarse clocks). */
const CLOCK_TICK_MS = 50;
/** Directories under one set of allowed paths that `bash` runs in at most (see the README). */
const MAX_DIRECTORIES = 200_000;
const MAX_CACHED_LISTINGS = 400_000;
/** Hooks and configs bigger than this are compared by stat only and cannot be put back. */
const MAX_KEPT_BYTES = 4 * 1024 * 1024;
const YIELD_EVERY_MS = 10;
/** `worktrees/<name>` below a git directory, as deep as protected-files.ts goes (submodules are followed however deep). */
const MAX_NESTED_DEPTH = 4;

type Kind = 'dir' | 'file' | 'link' | 'other';
interface Child {
  name: string;
  kind: Kind;
}

/** What the walk needs of a directory, worked out once per listing read. */
interface Shape {
  /** Subdirectories to walk (not links; not the `objects` of a git directory). */
  subdirs: string[];
  /** The kind of its `.git` entry, if it has one. */
  dotGit?: Kind;
  /** Laid out as a git directory: `HEAD` with `objects` or `commondir` (each may be a link). */
  laidOut: boolean;
}

/** A directory's identity and times: a listing is kept while they stay the same. */
interface Stamp {
  dev: number;
  ino: number;
  mtimeMs: number;
  ctimeMs: number;
  /** Not compared: a chmod changes the ctime. */
  mode: number;
}

/** A directory as listed: its stamp, its entries and, once worked out, what the walk needs of them. */
interface Listed {
  stamp: Stamp;
  children: Child[];
  shape?: Shape;
  names?: Set<string>;
}

/** The names in a listing, worked out once per listing read. */
const namesIn = (listed: Listed | undefined): ReadonlySet<string> => (listed === undefined ? NO_NAMES : (listed.names ??= new Set(listed.children.map((child) => child.name))));
const NO_NAMES: ReadonlySet<string> = new Set();

const sameStamp = (a: Stamp, b: Stamp): boolean => a.ctimeMs === b.ctimeMs && a.mtimeMs === b.mtimeMs && a.ino === b.ino && a.dev === b.dev;

/**
 * `join` for a directory the walk holds (normalized, absolute) and a name it listed (no slash, never
 * `.` or `..`): the same string, without join's normalizing, which the profile showed per entry.
 */
const childPath = (dir: string, name: string): string => (dir.endsWith('/') ? dir + name : `${dir}/${name}`);

const kindOf = (entry: { isDirectory(): boolean; isFile(): boolean; isSymbolicLink(): boolean }): Kind =>
  entry.isSymbolicLink() ? 'link' : entry.isDirectory() ? 'dir' : entry.isFile() ? 'file' : 'other';

/** The lstat of a path, or undefined when it is missing or cannot be reached (EACCES on the way). */
function lstatOrUndefined(path: string): Stats | undefined {
  try {
    return lstatSync(fsPath(path), { throwIfNoEntry: false });
  } catch {
    return undefined;
  }
}

/**
 * A directory's entries, each name a byte string. Read as text first, which costs a quarter less
 * than a listing of Buffers (the first walk reads every directory): Node decodes each byte that is
 * not part of valid UTF-8 to U+FFFD, so a listing without one holds only names whose UTF-8 is
 * their bytes; one with it (rare) is read again as Buffers.
 */
function listing(dir: string): Child[] {
  const entries = readdirSync(fsPath(dir), { withFileTypes: true });
  if (entries.some((entry) => entry.name.includes('\ufffd'))) {
    return readdirSync(pathBytes(dir), { withFileTypes: true, encoding: 'buffer' }).map((entry) => ({ name: entry.name.toString('latin1'), kind: kindOf(entry) }));
  }
  return entries.map((entry) => ({ name: isPrintableAscii(entry.name) ? entry.name : bytePath(entry.name), kind: kindOf(entry) }));
}

function shapeOf(dir: string, children: readonly Child[]): Shape {
  const kinds = new Map(children.map((child) => [child.name, child.kind]));
  // git follows links for all three (a HEAD link to `refs/` is a legacy symbolic ref it still takes).
  const fileOrLink = (name: string): boolean => kinds.get(name) === 'file' || kinds.get(name) === 'link';
  const laidOut = fileOrLink('HEAD') && (kinds.get('objects') === 'dir' || kinds.get('objects') === 'link' || fileOrLink('commondir'));
  const subdirs = children.filter((child) => child.kind === 'dir' && child.name !== '.git' && !(laidOut && child.name === 'objects')).map((child) => childPath(dir, child.name));
  const dotGit = kinds.get('.git');
  return { subdirs, laidOut, ...(dotGit === undefined ? {} : { dotGit }) };
}

/** A protected path as it is now, with what tells when and what it became. */
interface Seen {
  entry: Entry;
  ctimeMs: number;
  /** `dev:ino` of a file: the same file under another name (a moved repository). */
  id?: string;
}

const MAX_CACHED_CONTENT = 2000;

const ABSENT: Seen = { entry: { kind: 'absent' }, ctimeMs: 0 };

/**
 * Directory listings and small protected files, kept while their stat is unchanged (and old
 * enough to trust): what makes a command that changes nothing cost one lstat per directory.
 */
class TreeCache {
  private readonly listings = new Map<string, Listed>();
  private readonly contents = new Map<string, { stamp: string; content: Buffer }>();

  /**
   * A directory's entries. The plain (not bigint) stat: microsecond times are enough beside the
   * tick, and it costs less.
   */
  listed(dir: string, now: number): Listed | undefined {
    const stats = lstatOrUndefined(dir);
    if (stats === undefined || !stats.isDirectory()) return undefined;
    const cached = this.listings.get(dir);
    if (cached !== undefined && sameStamp(cached.stamp, stats)) return cached;
    const stamp = { dev: stats.dev, ino: stats.ino, mtimeMs: stats.mtimeMs, ctimeMs: stats.ctimeMs, mode: stats.mode & 0o7777 };
    let children: Child[];
    try {
      children = listing(dir);
    } catch {
      return undefined;
    }
    const fresh = { stamp, children };
    if (stats.ctimeMs < now - CLOCK_TICK_MS) {
      if (this.listings.size >= MAX_CACHED_LISTINGS) this.listings.clear();
      this.listings.set(dir, fresh);
    }
    return fresh;
  }

  listing(dir: string, now: number): Child[] | undefined {
    return this.listed(dir, now)?.children;
  }

  seen(path: string, now: number): Seen {
    const stats = lstatOrUndefined(path);
    if (stats === undefined) return ABSENT;
    const { ctimeMs } = stats;
    const mode = stats.mode & 0o7777;
    if (stats.isSymbolicLink()) return { entry: { kind: 'link', target: readlinkSync(pathBytes(path), { encoding: 'buffer' }).toString('latin1') }, ctimeMs };
    if (stats.isDirectory()) return { entry: { kind: 'dir', mode }, ctimeMs };
    const id = `${stats.dev}:${stats.ino}`;
    const stamp = `${id}:${stats.size}:${stats.mtimeMs}:${ctimeMs}`;
    if (!stats.isFile() || stats.size > MAX_KEPT_BYTES) return { entry: { kind: 'file', mode, signature: stamp }, ctimeMs, id };
    const cached = this.contents.get(path);
    if (cached?.stamp === stamp) return { entry: { kind: 'file', mode, signature: stamp, content: cached.content }, ctimeMs, id };
    const read = readRegularFileWithStatsSync(fsPath(path), MAX_KEPT_BYTES, true);
    if (read === undefined) return { entry: { kind: 'file', mode, signature: stamp }, ctimeMs, id };
    if (ctimeMs < now - CLOCK_TICK_MS) {
      if (this.contents.size >= MAX_CACHED_CONTENT) this.contents.clear();
      this.contents.set(path, { stamp, content: read.bytes });
    }
    return { entry: { kind: 'file', mode, signature: stamp, content: read.bytes }, ctimeMs, id };
  }

  clear(): void {
    this.listings.clear();
    this.contents.clear();
  }
}

const isSample = (name: string): boolean => name.endsWith('.sample');
const PROTECTED_NAMES = ['config', 'config.worktree', 'commondir'];

/**
 * What of a git directory runs code or points git elsewhere: `config`, `config.worktree`,
 * `commondir`, `hooks` and each hook in it (git's `*.sample` files never run, so they are left out:
 * renaming one into place is a new hook; so are the put-back's temporary names, see putBytes).
 */
function protectedOf(cache: TreeCache, gitDir: string, now: number, listed: Listed | undefined = cache.listed(gitDir, now), gitmodules: readonly string[] = []): Map<string, Seen> {
  // The git directory's listing (kept while its stat is unchanged) says which exist: making one
  // changes the directory; only those there are looked at, each by its own stat, since a write in
  // place changes the file's ctime and not the directory's.
  const present = namesIn(listed);
  const found = new Map<string, Seen>();
  for (const name of PROTECTED_NAMES) {
    const path = childPath(gitDir, name);
    found.set(path, present.has(name) ? cache.seen(path, now) : ABSENT);
  }
  const hooks = childPath(gitDir, 'hooks');
  // One lstat gives the hooks directory's entry and its listing; anything but a readable
  // directory (a link, a file, a mode that forbids listing) is looked at as any other path.
  const hooksListed = present.has('hooks') ? cache.listed(hooks, now) : undefined;
  if (hooksListed === undefined) {
    found.set(hooks, present.has('hooks') ? cache.seen(hooks, now) : ABSENT);
  } else {
    found.set(hooks, { entry: { kind: 'dir', mode: hooksListed.stamp.mode }, ctimeMs: hooksListed.stamp.ctimeMs });
    for (const child of hooksListed.children) {
      if (isSample(child.name) || isPutBackTemporary(child.name)) continue;
      const path = childPath(hooks, child.name);
      found.set(path, cache.seen(path, now));
    }
  }
  // The `.gitmodules` of the work trees whose `.git` leads here, as the walk found them (present in
  // the work tree's listing): a write in place changes only the file's ctime, so each is looked at.
  for (const path of gitmodules) found.set(path, cache.seen(path, now));
  return found;
}

/** As the kernel (and git's realpath) resolves it: `..` after a link is the link target's parent, which Node's own realpathSync resolves by the text. */
const realPathOf = (path: string): string | undefined => {
  try {
    return realpathSync.native(pathBytes(path), { encoding: 'buffer' }).toString('latin1');
  } catch {
    return undefined;
  }
};

/** A path git can use is shorter than this (PATH_MAX): a longer one fails with ENAMETOOLONG. */
const PATH_MAX = 4096;
const GITDIR_PREFIX = 'gitdir: ';

/**
 * The directory a `gitdir:` file or a `commondir` file names, relative to `base`, read as git reads
 * it (setup.c, read_gitfile_gently and get_common_dir_noenv): a `gitdir:` file must start with
 * exactly `gitdir: `, and the path is the rest of the file up to a NUL, less only the newlines and
 * carriage returns at its end; spaces are part of it. A link is followed, as git's stat does. Only
 * the first PATH_MAX bytes of the path are read: past them git cannot use it anyway, and trailing
 * newlines any number of them long are stripped by git too.
 */
function named(file: string, base: string, gitdirLine: boolean): string | undefined {
  const prefix = gitdirLine ? GITDIR_PREFIX : '';
  const bytes = readRegularFilePrefixSync(pathBytes(file), prefix.length + PATH_MAX + 1);
  if (bytes === undefined) return undefined;
  const text = bytes.toString('latin1');
  if (!text.startsWith(prefix)) return undefined;
  const nul = text.indexOf('\0');
  // The bytes as they are, a byte string like every path here.
  const path = (nul < 0 ? text : text.slice(0, nul)).slice(prefix.length).replace(/[\r\n]+$/, '');
  if (path === '') return undefined;
  // Joined, not resolved: `link/..` is the link target's parent to git's realpath, not `base`.
  return isAbsolute(path) ? path : `${base}/${path}`;
}

interface Census {
  /** Real paths of the git directories found, and what each one's protected files were. */
  repositories: Map<string, Map<string, Seen>>;
  /**
   * `dev:ino` of each git directory: another directory renamed to a known one's path brings files
   * whose ctimes are as old as they were made (a rename changes the moved directory's ctime, not
   * its files'), so what differs there is put back whatever its ctime, never taken in as the user's.
   */
  identities: Map<string, string | undefined>;
  /** The tree had more directories than the cap when last walked: `bash` is refused there. */
  overCap: boolean;
  /** Every directory was walked (a census stopped at the cap is not: the file tools refuse hard links then). */
  complete: boolean;
}

const keyOf = (sandbox: PathSandbox): string => `${sandbox.roots.join('\0')}\n${sandbox.hiddenPaths.join('\0')}`;

async function breathe(last: { at: number }): Promise<void> {
  if (performance.now() - last.at < YIELD_EVERY_MS) return;
  await new Promise((resolveTurn) => setImmediate(resolveTurn));
  last.at = performance.now();
}

/**
 * The git directories under the allowed paths: every `.git` entry (a directory, a `gitdir:` file, a
 * link), every directory laid out as one (`HEAD` with `objects` or `commondir`: bare repositories,
 * a moved `.git`), what their `commondir` files name, and their submodules and worktrees. Links to
 * directories are not followed by the walk; a `.git` file or link is, to a real path inside the
 * allowed paths and not hidden (a `gitdir:` may name DATA_DIR, which the command cannot write).
 */
interface Found {
  /** Each git directory found, with its listing when it could be read. */
  gitDirs: Map<string, Listed | undefined>;
  /**
   * The `.gitmodules` present in the work trees whose `.git` entry leads to each git directory:
   * submodule URLs (and, for git before 2.24, `update = !command`) the user's `git submodule
   * update` obeys outside the sandbox. A work tree's listing says whether there is one.
   */
  gitmodules: Map<string, string[]>;
  /** More directories than `limit` were walked (the walk stopped there when the limit stops it). */
  overCap: boolean;
  /** Every directory was walked. */
  complete: boolean;
  /** Directories that could not be listed (a service that is not root meets a mode the command set). */
  unlisted: string[];
}

interface WalkLimit {
  /** Directories above which the tree is over the cap. */
  cap: number;
  /** Stop at the cap (the first census) rather than walk on (the check after a command). */
  stop: boolean;
}

async function findGitDirectories(cache: TreeCache, sandbox: PathSandbox, now: number, limit: WalkLimit): Promise<Found> {
  const unlisted: string[] = [];
  const gitDirs = new Set<string>();
  const gitmodules = new Map<string, string[]>();
  const workTree = (gitDir: string | undefined, tree: string, listed: Listed): void => {
    if (gitDir === undefined || !namesIn(listed).has('.gitmodules')) return;
    const own = gitmodules.get(gitDir);
    if (own === undefined) gitmodules.set(gitDir, [childPath(tree, '.gitmodules')]);
    else own.push(childPath(tree, '.gitmodules'));
  };
  const roots = sandbox.roots.map(bytePath);
  const hiddenPaths = sandbox.hiddenPaths.map(bytePath);
  const hidden = (path: string): boolean => hiddenPaths.some((h) => inside(h, path));
  /** The real path of a directory a `.git` entry or `commondir` names, if the command can write it (PathSandbox.contains, by bytes). */
  const target = (path: string | undefined): string | undefined => {
    const real = path === undefined ? undefined : realPathOf(path);
    if (real === undefined || !roots.some((root) => inside(root, real)) || hidden(real)) return undefined;
    const stats = lstatOrUndefined(real);
    // A directory is never a hard link of a hidden file, but the filter is asked as contains() does.
    return stats?.isDirectory() === true && !sandbox.hiddenFilter()(shownPath(real), stats) ? real : undefined;
  };
  const accept = (path: string | undefined): string | undefined => {
    const real = target(path);
    if (real !== undefined) gitDirs.add(real);
    return real;
  };
  const stack = [...roots];
  const last = { at: performance.now() };
  let walked = 0;
  while (stack.length > 0) {
    if (++walked > limit.cap && limit.stop) return { gitDirs: new Map([...gitDirs].map((dir) => [dir, undefined])), gitmodules, overCap: true, complete: false, unlisted };
    const dir = stack.pop() as string;
    const found = cache.listed(dir, now);
    if (found === undefined) {
      if (lstatOrUndefined(dir)?.isDirectory() === true) unlisted.push(dir);
      continue;
    }
    found.shape ??= shapeOf(dir, found.children);
    const { subdirs, dotGit, laidOut } = found.shape;
    if (laidOut) gitDirs.add(dir);
    if (dotGit !== undefined) {
      const path = childPath(dir, '.git');
      let gitDir: string | undefined;
      if (dotGit === 'dir') gitDirs.add((gitDir = path));
      // git stats `.git` through a link: a link to a regular file is a `gitdir:` file, its path
      // taken from the directory holding the link.
      else if (dotGit === 'link') gitDir = accept(lstatOrUndefined(realPathOf(path) ?? path)?.isFile() === true ? named(path, dir, true) : path);
      else if (dotGit === 'file') gitDir = accept(named(path, dir, true));
      workTree(gitDir, dir, found);
    }
    for (const sub of subdirs) if (!hidden(sub)) stack.push(sub);
    await breathe(last);
  }
  // What the found ones lead to: their common directory, submodules and worktrees.
  // Each git directory's listing is read once here and handed on to protectedOf.
  const listings = new Map<string, Listed | undefined>();
  const queue = [...gitDirs].map((dir) => ({ dir, depth: 0 }));
  for (let next = 0; next < queue.length; next++) {
    const { dir, depth } = queue[next] as { dir: string; depth: number };
    const listed = cache.listed(dir, now);
    listings.set(dir, listed);
    const present = namesIn(listed);
    // Making a `commondir` changes the directory, so its listing says whether there is one.
    const common = present.has('commondir') ? target(named(join(dir, 'commondir'), dir, false)) : undefined;
    if (common !== undefined && !gitDirs.has(common)) {
      gitDirs.add(common);
      queue.push({ dir: common, depth: depth + 1 });
    }
    // Submodules, however deep: a submodule's name may hold slashes (`git submodule add <url> sub/x`
    // keeps its git directory in `modules/sub/x`) and a submodule has `modules` of its own, so all
    // below `modules` is walked as the tree is (each directory laid out as a git directory taken,
    // and the top ones whatever their layout).
    if (present.has('modules')) {
      const modules = join(dir, 'modules');
      const below = [modules];
      for (let sub = below.pop(); sub !== undefined; sub = below.pop()) {
        const listedSub = cache.listed(sub, now);
        if (listedSub === undefined) continue;
        listedSub.shape ??= shapeOf(sub, listedSub.children);
        if (sub !== modules && (listedSub.shape.laidOut || dirname(sub) === modules) && !gitDirs.has(sub)) {
          gitDirs.add(sub);
          queue.push({ dir: sub, depth: depth + 1 });
        }
        below.push(...listedSub.shape.subdirs);
        await breathe(last);
      }
    }
    if (depth >= MAX_NESTED_DEPTH) continue;
    if (present.has('worktrees')) {
      for (const child of cache.listing(join(dir, 'worktrees'), now) ?? []) {
        const path = join(dir, 'worktrees', child.name);
        if (child.kind === 'dir' && !gitDirs.has(path)) {
          gitDirs.add(path);
          queue.push({ dir: path, depth: depth + 1 });
        }
      }
    }
    await breathe(last);
  }
  return { gitDirs: listings, gitmodules, overCap: walked > limit.cap, complete: true, unlisted };
}

/** The git directory's `dev:ino`, from its listing when the walk read one. */
function identityOf(gitDir: string, listed: Listed | undefined): string | undefined {
  const stats = listed?.stamp ?? lstatOrUndefined(gitDir);
  return stats === undefined ? undefined : `${stats.dev}:${stats.ino}`;
}

async function takeCensus(cache: TreeCache, sandbox: PathSandbox, now: number, cap: number): Promise<Census> {
  const { gitDirs, gitmodules, overCap, complete } = await findGitDirectories(cache, sandbox, now, { cap, stop: true });
  return {
    repositories: new Map([...gitDirs].map(([gitDir, listed]) => [gitDir, protectedOf(cache, gitDir, now, listed, gitmodules.get(gitDir))])),
    identities: new Map([...gitDirs].map(([gitDir, listed]) => [gitDir, identityOf(gitDir, listed)])),
    overCap,
    complete,
  };
}

/** A `bash` command running now: since when a change may be a command's, what it can write, and the census its check compares with. */
interface RunningCommand {
  /**
   * Its start, or the earlier start of another replica's command that was running under an
   * overlapping set when it was recorded (census-coordinator.ts).
   */
  since: number;
  census: Census;
  /** Its allowed paths and hidden paths, byte strings as the walk's. */
  roots: string[];
  hidden: string[];
}

const canWrite = (command: RunningCommand, path: string): boolean => command.roots.some((root) => inside(root, path)) && !command.hidden.some((h) => inside(h, path));

/**
 * A first census taken while commands under other sets of allowed paths ran (`writers`: every one
 * running at any moment of the walk) holds what they had planted by then in the repositories they
 * can write. Each such repository takes its baseline from the census those commands' checks
 * compare with, which was taken before they started: the files they can write as that census
 * knew them (absent when it did not know them), the rest as the walk found them. A repository one
 * of them can write and its census does not know (made since, by it or by the user) is left out:
 * new here as it is there, so both checks clean it alike. Otherwise the writer's check would undo
 * its plant and this set's check would write it back as the user's.
 */
function adoptBaselines(taken: Census, writers: readonly RunningCommand[]): Census {
  for (const [gitDir, found] of [...taken.repositories]) {
    const able = writers.filter((writer) => canWrite(writer, gitDir));
    if (able.length === 0) continue;
    const known = able.map((writer) => writer.census.repositories.get(gitDir));
    const source = able[0] as RunningCommand;
    const before = known[0];
    if (before === undefined || known.includes(undefined)) {
      taken.repositories.delete(gitDir);
      taken.identities.delete(gitDir);
      continue;
    }
    const adopted = new Map(before);
    for (const [path, seen] of found) if (!adopted.has(path) && !able.some((writer) => canWrite(writer, path))) adopted.set(path, seen);
    taken.repositories.set(gitDir, adopted);
    taken.identities.set(gitDir, source.census.identities.get(gitDir));
  }
  return taken;
}

export interface CensusReport {
  /** Protected paths of known repositories that the command changed and that were put back. */
  restored: string[];
  /** What was taken out of repositories new since the census: `<config> (<keys>)`, `<hook>`. */
  removed: string[];
  /** Set when the tree has more directories than the cap: it was walked whole, and `bash` is refused there from now on. */
  overCap: boolean;
  /** The cap, for the note. */
  maxDirectories: number;
}

export interface RepositoryCensusOptions {
  /** Directories under one set of allowed paths that `bash` runs in at most (MAX_DIRECTORIES; smaller in tests). */
  maxDirectories?: number;
  /** Other service processes' commands and first censuses (census-coordinator.ts); none by default: one process. */
  coordinator?: CensusCoordinator;
}

/** A first census asked for outside a `bash` call (the file tools' hard-link check): waits for other replicas this long at most. */
const DEFAULT_WAIT: CoordinationWait = { timeoutMs: 120_000 };

/**
 * What the service knows of the repositories under each set of allowed paths, for its life: the
 * census of each, the `bash` commands running now, and the cached listings and files. One per
 * ToolHost (tool-host.ts), built at start-up: a second service (or test) has its own and trusts
 * what it finds at its own first command, never what another one saw. Replicas sharing a
 * directory take their first censuses only while none of the others' commands runs there
 * (census-coordinator.ts).
 */
export class RepositoryCensus {
  private readonly censuses = new Map<string, Promise<Census>>();
  /** The `bash` commands running now: a change after the earliest one's start may be theirs. */
  private readonly running = new Map<symbol, RunningCommand>();
  /** For each first census being taken, the commands running at any moment of its walk (adoptBaselines). */
  private readonly taking = new Set<RunningCommand[]>();
  private readonly cache = new TreeCache();
  private readonly maxDirectories: number;
  private readonly coordinator: CensusCoordinator;

  constructor(options: RepositoryCensusOptions = {}) {
    this.maxDirectories = options.maxDirectories ?? MAX_DIRECTORIES;
    this.coordinator = options.coordinator ?? new CensusCoordinator();
  }

  /**
   * Before a `bash` command: the refusal to give when the tree under its allowed paths has more
   * directories than the cap, undefined when it may run. A tree found over the cap is walked again
   * (up to the cap) each time, so removing directories lets `bash` run again. A first census waits
   * for other replicas' commands there (`wait` bounds it); one that waited too long is a refusal too.
   */
  async admit(sandbox: PathSandbox, wait: CoordinationWait = DEFAULT_WAIT): Promise<string | undefined> {
    let census: Census;
    try {
      census = await this.currentCensus(sandbox, wait);
    } catch (error) {
      if (error instanceof SandboxCoordinationRefusal) return error.message;
      throw error;
    }
    if (!census.overCap) return undefined;
    return `Refusing to run bash: there are more than ${this.maxDirectories} directories under the allowed paths, too many to check every git repository in them for planted hooks and settings after each command; remove directories or narrow ALLOWED_PATHS`;
  }

  /**
   * Before a `bash` command: its view of the repositories under its allowed paths (the tree is
   * walked only the first time). Its `check` must follow the command, always, even when it failed.
   * The command is made known to the other replicas first, which may make it wait for one's first
   * census (`wait` bounds it: SandboxCoordinationRefusal, nothing to check then).
   */
  async watch(sandbox: PathSandbox, wait: CoordinationWait = DEFAULT_WAIT): Promise<RepositoryWatch> {
    const census = await this.censusOf(sandbox, wait);
    const roots = sandbox.roots.map(bytePath);
    // Until its check has put back what it planted, no other replica's first census looks here.
    const { release, othersSince } = await this.coordinator.command(roots, wait);
    const token = Symbol('bash command');
    const command: RunningCommand = { since: Math.min(Date.now(), othersSince ?? Infinity), census, roots, hidden: sandbox.hiddenPaths.map(bytePath) };
    this.running.set(token, command);
    for (const writers of this.taking) writers.push(command);
    const earliestStart = (): number => Math.min(...[...this.running.values()].map((running) => running.since));
    const finished = (): void => {
      this.running.delete(token);
      release();
    };
    return new RepositoryGuard(this.cache, sandbox, census, this.maxDirectories, earliestStart, finished, othersSince !== undefined);
  }

  /**
   * The config and hook files of every repository under the allowed paths as last seen: the file
   * tools refuse a second name (hard link) of any of them. As the kernel takes them: a name that is
   * not UTF-8 has no text path.
   */
  async knownFiles(sandbox: PathSandbox): Promise<Buffer[] | undefined> {
    const census = await this.currentCensus(sandbox);
    if (!census.complete) return undefined;
    return [...census.repositories.values()].flatMap((files) => [...files].filter(([, s]) => s.entry.kind === 'file').map(([path]) => pathBytes(path)));
  }

  /** For the bench's first-walk figure: forget every census and cached listing and file. */
  forget(): void {
    this.censuses.clear();
    this.cache.clear();
  }

  /**
   * The census of these allowed paths, taken again from scratch if the tree was over the cap when
   * last walked and no `bash` command is running: bash has been refused there since (and the
   * commands that ran had everything checked after them), so what is found is the user's.
   */
  private async currentCensus(sandbox: PathSandbox, wait: CoordinationWait = DEFAULT_WAIT): Promise<Census> {
    const key = keyOf(sandbox);
    const last = this.censuses.get(key);
    const overCap = last === undefined ? false : await last.then((census) => census.overCap, () => false);
    // Never while a `bash` command runs: the fresh census would trust what it planted meanwhile,
    // and its own check, against the old census, puts that back only once. Until all have ended
    // the old census stands (refused while over the cap; their checks walk the tree again).
    if (overCap && this.running.size === 0 && this.censuses.get(key) === last) this.censuses.delete(key);
    return this.censusOf(sandbox, wait);
  }

  /**
   * The census of these allowed paths, taken now if there is none yet (everything found is trusted
   * then), once no other replica's command can be writing here.
   */
  private censusOf(sandbox: PathSandbox, wait: CoordinationWait): Promise<Census> {
    const key = keyOf(sandbox);
    let census = this.censuses.get(key);
    if (census === undefined) {
      // Commands under other sets may be running and writing here while the walk reads.
      const writers = [...this.running.values()];
      this.taking.add(writers);
      census = this.walkAlone(sandbox, wait).then(
        (taken) => {
          this.taking.delete(writers);
          return adoptBaselines(taken, writers);
        },
        (error: unknown) => {
          this.taking.delete(writers);
          throw error;
        },
      );
      this.censuses.set(key, census);
      census.catch(() => this.censuses.delete(key));
    }
    return census;
  }

  /** A first census, walked while no other replica's command under an overlapping set is in flight. */
  private async walkAlone(sandbox: PathSandbox, wait: CoordinationWait): Promise<Census> {
    const release = await this.coordinator.census(sandbox.roots.map(bytePath), wait);
    try {
      return await takeCensus(this.cache, sandbox, Date.now(), this.maxDirectories);
    } finally {
      release();
    }
  }
}

/** One `bash` command's view of the repositories under its allowed paths (RepositoryCensus.watch). */
export interface RepositoryWatch {
  /** Another service replica's command under an overlapping set was running when this one was recorded. */
  readonly othersRunning: boolean;
  /**
   * Puts back what the command changed in known repositories and cleans new ones. `handled`: paths
   * another mechanism already guards and restores (the protected files around the command), taken
   * here as they are; byte strings, as every path here.
   */
  check(handled: readonly string[]): Promise<CensusReport>;
}

class RepositoryGuard implements RepositoryWatch {
  constructor(
    private readonly cache: TreeCache,
    private readonly sandbox: PathSandbox,
    private readonly census: Census,
    private readonly maxDirectories: number,
    /** When the earliest `bash` command still running started (this one included; other replicas' that were running when one was recorded). */
    private readonly earliestStart: () => number,
    private readonly finished: () => void,
    readonly othersRunning: boolean,
  ) {}

  async check(handled: readonly string[]): Promise<CensusReport> {
    try {
      const { cache } = this;
      const since = this.earliestStart() - CLOCK_TICK_MS;
      const now = Date.now();
      const restored: string[] = [];
      // Walked whole, past the cap: a command that made the tree that big cannot hide a hook past it.
      const limit = { cap: this.maxDirectories, stop: false };
      let found = await findGitDirectories(cache, this.sandbox, now, limit);
      // A directory the command made unreadable (`chmod 0111`: git still enters it, a listing
      // cannot) is made readable again and the walk repeated, so nothing hides below it.
      for (let pass = 0; pass < 3 && found.unlisted.length > 0; pass++) {
        const locked = found.unlisted.filter((dir) => cache.seen(dir, now).ctimeMs >= since);
        for (const dir of locked) {
          try {
            chmodSync(pathBytes(dir), (lstatSync(pathBytes(dir)).mode & 0o7777) | 0o700);
            restored.push(`${shownPath(dir)} (made readable again to look for repositories in it)`);
          } catch {
            restored.push(`${shownPath(dir)} (could not be made readable to look for repositories in it)`);
          }
        }
        if (locked.length === 0) break;
        found = await findGitDirectories(cache, this.sandbox, now, limit);
      }
      const { gitDirs, gitmodules, overCap } = found;
      const removed: string[] = [];
      const known = this.census.repositories;
      let movedFiles: Map<string, Buffer> | undefined;
      const last = { at: performance.now() };
      for (const [gitDir, listed] of gitDirs) {
        await breathe(last);
        const identity = identityOf(gitDir, listed);
        const modules = gitmodules.get(gitDir) ?? [];
        const before = known.get(gitDir);
        // The same path holding another directory than the census saw: whatever differs there is
        // the command's, however old its files' ctimes (a rename does not change them).
        const replaced = this.census.identities.get(gitDir) !== identity;
        try {
          const undone =
            before === undefined
              ? cleanNew(cache, gitDir, (movedFiles ??= filesById(known)), this.sandbox.roots, now, modules)
              : putBack(cache, gitDir, before, handled, replaced ? -Infinity : since, now, listed, modules);
          (before === undefined ? removed : restored).push(...undone.paths);
          known.set(gitDir, undone.paths.length === 0 ? undone.current : protectedOf(cache, gitDir, Date.now(), undefined, modules));
          this.census.identities.set(gitDir, identity);
        } catch (error) {
          // Fails the call rather than pass in silence; a new repository stays new for the next check.
          (before === undefined ? removed : restored).push(`${shownPath(gitDir)} (could not be checked: ${(error as Error).message})`);
        }
      }
      // Gone (deleted, moved: found again elsewhere as new) or no longer reachable without a link.
      for (const gitDir of [...known.keys()]) {
        if (gitDirs.has(gitDir)) continue;
        known.delete(gitDir);
        this.census.identities.delete(gitDir);
      }
      this.census.overCap = overCap;
      this.census.complete = true;
      return { restored: restored.sort(), removed: removed.sort(), overCap, maxDirectories: this.maxDirectories };
    } finally {
      this.finished();
    }
  }
}

/** Content of every known file by `dev:ino`: a repository moved by the command keeps its own files. */
function filesById(known: Census['repositories']): Map<string, Buffer> {
  const byId = new Map<string, Buffer>();
  for (const files of known.values()) {
    for (const s of files.values()) if (s.id !== undefined && s.entry.kind === 'file' && s.entry.content !== undefined) byId.set(s.id, s.entry.content);
  }
  return byId;
}

const movedHere = (s: Seen, movedFiles: ReadonlyMap<string, Buffer>): boolean =>
  s.id !== undefined && s.entry.kind === 'file' && s.entry.content !== undefined && movedFiles.get(s.id)?.equals(s.entry.content) === true;

/** What a repository's check undid, and its protected files as they were found. */
interface Undone {
  paths: string[];
  current: Map<string, Seen>;
}

function putBack(
  cache: TreeCache,
  gitDir: string,
  before: Map<string, Seen>,
  handled: readonly string[],
  since: number,
  now: number,
  listed: Listed | undefined,
  gitmodules: readonly string[],
): Undone {
  const restored: string[] = [];
  const hooks = childPath(gitDir, 'hooks');
  const current = protectedOf(cache, gitDir, now, listed, gitmodules);
  // Most repositories are unchanged: only the paths that differ are sorted (a directory before
  // what is in it) and looked at further.
  const differ = (path: string): boolean => !same(before.get(path)?.entry ?? ABSENT.entry, (current.get(path) ?? cache.seen(path, now)).entry);
  const changed = [...current.keys(), ...[...before.keys()].filter((path) => !current.has(path))].filter(differ);
  for (const path of changed.sort()) {
    if (handled.some((other) => inside(other, path))) continue;
    const was = before.get(path)?.entry ?? { kind: 'absent' };
    const is = current.get(path) ?? cache.seen(path, now);
    // A removal shows in the directory's ctime, anything else in the entry's own.
    // A hook also counts as changed when its directory did: a directory renamed to `hooks` brings
    // hooks as old as they were made.
    const inHooks = dirname(path) === hooks;
    const changedAt = is.entry.kind === 'absent' || inHooks ? Math.max(is.ctimeMs, cache.seen(dirname(path), now).ctimeMs) : is.ctimeMs;
    if (changedAt < since) continue; // the user's change, made before any running command started
    try {
      putBytes(path, was);
      restored.push(shownPath(path));
    } catch {
      restored.push(`${shownPath(path)} (could not be restored)`);
    }
  }
  return { paths: restored, current };
}

/** A new repository keeps git's own settings and no hook that runs; returns what was taken out. */
function cleanNew(cache: TreeCache, gitDir: string, movedFiles: ReadonlyMap<string, Buffer>, roots: readonly string[], now: number, gitmodules: readonly string[]): Undone {
  const removed: string[] = [];
  // A new repository's `.gitmodules` is a work-tree file its clone brought (git takes no command
  // from it, only URLs): kept, and known from now on, so a later command changing it is put back.
  const current = protectedOf(cache, gitDir, now, undefined, gitmodules);
  for (const name of ['config', 'config.worktree']) {
    const path = join(gitDir, name);
    const s = cache.seen(path, now);
    if (s.entry.kind === 'absent' || movedHere(s, movedFiles)) continue;
    const text = s.entry.kind === 'file' && s.entry.content !== undefined && s.entry.content.length <= MAX_CONFIG_BYTES ? s.entry.content.toString('utf8') : '';
    // Text for the filter, which resolves `core.worktree` from it: a git directory whose path is not
    // UTF-8 reaches nothing as text, so its `core.worktree` is dropped.
    const filtered = filterRepositoryConfig(text, pathBytes(gitDir).toString('utf8'), roots);
    const readable = s.entry.kind === 'file' && s.entry.content !== undefined && s.entry.content.length <= MAX_CONFIG_BYTES;
    if (readable && filtered.dropped.length === 0) continue;
    putBytes(path, { kind: 'file', mode: 0o644, signature: '', content: Buffer.from(filtered.text) });
    removed.push(`${shownPath(path)} (${readable ? [...new Set(filtered.dropped)].join(', ') : 'not a readable config file'})`);
  }
  const hooks = join(gitDir, 'hooks');
  const kind = cache.seen(hooks, now).entry.kind;
  if (kind !== 'absent' && kind !== 'dir') {
    putBytes(hooks, { kind: 'dir', mode: 0o755 });
    removed.push(shownPath(hooks));
  } else if (kind === 'dir') {
    for (const child of cache.listing(hooks, now) ?? []) {
      const path = join(hooks, child.name);
      if ((isSample(child.name) && child.kind === 'file') || isPutBackTemporary(child.name)) continue;
      if (movedHere(cache.seen(path, now), movedFiles)) continue;
      putBytes(path, { kind: 'absent' });
      removed.push(shownPath(path));
    }
  }
  return { paths: removed, current };
}

/** The tool result's lines for a report; empty when nothing was found. */
export function censusNotes(report: CensusReport): string[] {
  const notes: string[] = [];
  if (report.removed.length > 0) {
    notes.push(`[git repositories new since the last command had hooks or settings that run programs, which have been removed: ${report.removed.join(', ')}]`);
  }
  if (report.overCap) {
    notes.push(`[more than ${report.maxDirectories} directories under the allowed paths now: every git repository in them was checked after this command, but bash refuses to run there until there are fewer]`);
  }
  return notes;
}
