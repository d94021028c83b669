import { closeSync, constants, fchmodSync, lstatSync, mkdirSync, openSync, readdirSync, readFileSync, readlinkSync, realpathSync, rmSync, symlinkSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { bytePath, fsPath, pathBytes, shownPath } from '../../util/byte-path.js';
import { replaceEntry, TEMPORARY_PREFIX, walkToParent, writeNewFile, type HeldDir } from '../../util/held-dir.js';

/** What a protected path was before a command ran. */
export type Entry =
  | { kind: 'absent' }
  /** `content` is kept for files up to MAX_KEPT_BYTES; bigger ones are compared by size and time. */
  | { kind: 'file'; mode: number; signature: string; content?: Buffer }
  /** `target` is a byte string (util/byte-path.ts): a link to a name that is not UTF-8 is put back as it was. */
  | { kind: 'link'; target: string }
  | { kind: 'dir'; mode: number };

/** Protected files bigger than this are compared by size and time only (hooks are scripts; configs are small). */
const MAX_KEPT_BYTES = 4 * 1024 * 1024;
const MAX_ENTRIES = 2000;

/** What stands at `path` (a byte string, util/byte-path.ts) now. */
export function entryOf(path: string): Entry {
  let stats;
  try {
    stats = lstatSync(fsPath(path));
  } catch {
    return { kind: 'absent' };
  }
  if (stats.isSymbolicLink()) return { kind: 'link', target: readlinkSync(pathBytes(path), { encoding: 'buffer' }).toString('latin1') };
  if (stats.isDirectory()) return { kind: 'dir', mode: stats.mode & 0o7777 };
  const signature = `${stats.size}:${stats.mtimeMs}`;
  if (stats.isFile() && stats.size <= MAX_KEPT_BYTES) return { kind: 'file', mode: stats.mode & 0o7777, signature, content: readFileSync(fsPath(path)) };
  return { kind: 'file', mode: stats.mode & 0o7777, signature };
}

export const same = (a: Entry, b: Entry): boolean => {
  if (a.kind !== b.kind) return false;
  if (a.kind === 'file' && b.kind === 'file') {
    if (a.mode !== b.mode) return false;
    return a.content !== undefined && b.content !== undefined ? a.content.equals(b.content) : a.signature === b.signature;
  }
  if (a.kind === 'link' && b.kind === 'link') return a.target === b.target;
  if (a.kind === 'dir' && b.kind === 'dir') return a.mode === b.mode;
  return true;
};

/** The path and, for a directory (hooks), everything below it; byte strings, as every name below. */
function walk(path: string, out: Map<string, Entry>): void {
  const entry = entryOf(path);
  out.set(path, entry);
  if (entry.kind !== 'dir' || out.size > MAX_ENTRIES) return;
  for (const name of readdirSync(pathBytes(path), { encoding: 'buffer' })) {
    const text = name.toString('latin1');
    if (!isPutBackTemporary(text)) walk(join(path, text), out);
  }
}

/**
 * Puts `entry` back at `path` (a real path, see `take`) through held directories: the command may
 * have swapped `.git` for a link to a directory outside, and a path handed to the kernel whole
 * would delete and write there, as the service. A link or file found where a directory stood is
 * replaced by a directory (it was made after the real path was taken), a missing one made.
 */
export function put(path: string, entry: Entry): void {
  // walkToParent takes byte strings; handed over as it is, a UTF-8 name like `café` led the walk
  // to another directory, made there.
  putBytes(bytePath(path), entry);
}

/**
 * `put` for a path that is a byte string already (util/byte-path.ts): the repository census's.
 *
 * A file or link is never removed and made again: the new one is made under a temporary name in
 * the same held directory and renamed over the target, so the target is at every moment either
 * what stood there or what is put back. Another `bash` command's snapshot, taken while this one
 * restores, would otherwise see the file missing, and its own restore would then delete it. A
 * directory that is to stay a directory keeps what is in it and gets only its mode back.
 */
export function putBytes(path: string, entry: Entry): void {
  if (entry.kind === 'file' && entry.content === undefined) throw new Error('too large to keep a copy');
  const walked = walkToParent('/', path.slice(1), true);
  if (!('dir' in walked)) return; // never with `make`
  const { dir, name } = walked;
  try {
    if (entry.kind === 'absent') rmSync(dir.entry(name), { recursive: true, force: true });
    else if (entry.kind === 'dir') putDirectory(dir, name, entry.mode);
    else if (entry.kind === 'link') replaceEntry(dir, name, (temporary) => symlinkSync(pathBytes(entry.target), temporary));
    else replaceEntry(dir, name, (temporary) => writeNewFile(temporary, entry.content ?? Buffer.alloc(0), entry.mode));
  } finally {
    dir.close();
  }
}

/**
 * The temporary names `putBytes` writes under (held-dir.ts): the guards skip them in a directory
 * they walk (`hooks`). A concurrent check that took one for a planted hook would delete it before
 * it is renamed into place.
 */
export const isPutBackTemporary = (name: string): boolean => name.startsWith(TEMPORARY_PREFIX);

/**
 * A directory at `name` with `mode`. One standing there stays, with what is in it: removed and made
 * again, its files (hooks the command never touched, so not put back one by one) were lost. Anything
 * else standing there (a file, a link) is removed first; a directory cannot be renamed over it.
 */
function putDirectory(dir: HeldDir, name: string, mode: number): void {
  const stats = dir.stat(name);
  if (stats?.isDirectory() !== true) {
    if (stats !== undefined) dir.unlink(name);
    mkdirSync(dir.entry(name), { mode });
  }
  const fd = openSync(dir.entry(name), constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW);
  try {
    fchmodSync(fd, mode);
  } finally {
    closeSync(fd);
  }
}


/**
 * The path with its directory resolved (each protected path as the kernel will find it): with no
 * link left on the way, any link `put` meets later was put there since. A directory that does not
 * exist yet leaves the path as it is.
 */
function realParent(path: string): string {
  try {
    return join(realpathSync.native(pathBytes(dirname(path)), { encoding: 'buffer' }).toString('latin1'), basename(path));
  } catch {
    return path;
  }
}

/**
 * The protected files as they were before a command, to find and undo what the sandbox could not
 * block (a hard link made and written in the same command, a path the sandbox did not know was
 * protected when it started). A file whose content or mode changed gets its old bytes back, as a
 * new inode, so any hard link made to it meanwhile keeps only the attacker's copy.
 */
export class ProtectedSnapshot {
  private trustedPaths: readonly string[];

  constructor(
    private readonly before: ReadonlyMap<string, Entry>,
    handled: readonly string[],
    /** Lets go of the shared baselines (ProtectedBaselines); once, after `restore`. */
    readonly release: () => void = () => undefined,
    /** Marks the shared baselines it restores to as not to be trusted (ProtectedBaselines). */
    private readonly distrustBaselines: () => void = () => undefined,
  ) {
    this.trustedPaths = handled;
  }

  /**
   * The paths (as given) whose baseline was taken before any running command could write them:
   * the census leaves these to the snapshot. One first taken while another command that can
   * write it ran may hold what that one planted; the census checks it again against what it knew.
   */
  get handled(): readonly string[] {
    return this.trustedPaths;
  }

  /**
   * Another service replica's command that can write these paths was running when this one's was
   * recorded (census-coordinator.ts): the baselines may hold what it planted, so the census checks
   * every path again, for this command and for every one that shares the baselines from now on.
   */
  distrust(): void {
    this.trustedPaths = [];
    this.distrustBaselines();
  }

  /**
   * A snapshot of its own, for one command with no other running (tests, the race harness);
   * `bash` takes its through ProtectedBaselines. `paths` are byte strings (util/byte-path.ts): a
   * protected path may be named by bytes that are not UTF-8.
   */
  static take(paths: readonly string[]): ProtectedSnapshot {
    const before = new Map<string, Entry>();
    for (const path of paths) walk(realParent(path), before);
    return new ProtectedSnapshot(before, paths);
  }

  /** Puts back every changed path; returns the ones it restored, sorted, as text to show. */
  restore(): string[] {
    const after = new Map<string, Entry>();
    for (const path of this.before.keys()) walk(path, after);
    const restored: string[] = [];
    // Parents first, so a directory is back before its files are written into it.
    for (const path of [...new Set([...this.before.keys(), ...after.keys()])].sort()) {
      const was = this.before.get(path) ?? { kind: 'absent' };
      const now = after.get(path) ?? entryOf(path);
      if (same(was, now)) continue;
      try {
        putBytes(path, was);
        restored.push(shownPath(path));
      } catch {
        restored.push(`${shownPath(path)} (could not be restored)`);
      }
    }
    return restored;
  }
}

/** `path` is `root` or below it: isWithin (paths.ts) for normalized absolute paths, without its `relative` (the census calls it per walked directory). */
export const under = (root: string, path: string): boolean => path === root || path.startsWith(root.endsWith('/') ? root : `${root}/`);

interface Baseline {
  entries: Map<string, Entry>;
  /** Taken while no running command could write it (see ProtectedSnapshot.handled). */
  trusted: boolean;
}

interface Holder {
  /** The real paths of its snapshot. */
  paths: string[];
  /** What it can write (a `bash` command's allowed paths), byte strings; none for a read-only one. */
  writable: string[];
}

/**
 * The protected files as they were before any running command could change them, one baseline per
 * protected path for the service's life of the commands that share it. A `bash` command's snapshot
 * taken while another one runs would take what that one planted (a hook, a config) for the
 * original: the first one's restore removes it, then the second one's writes it back, and it runs
 * on the user's machine outside any sandbox. So a path's baseline is taken once, by the first
 * command that needs it, and every command that starts while it is held restores to it. It is held
 * while a running command has it in its snapshot or can write it (it lies below that command's
 * allowed paths: the sibling repository a command in another one plants a hook in), and dropped
 * when the last such command ends. One per ToolHost (tool-host.ts), never in module scope.
 */
export class ProtectedBaselines {
  private readonly baselines = new Map<string, Baseline>();
  private readonly holders = new Set<Holder>();

  /**
   * The snapshot for a command that protects `paths` (byte strings) and can write below
   * `writable` (text or byte paths, its allowed paths; empty for a read-only command). Its
   * `release` must follow its restore, always.
   */
  take(paths: readonly string[], writable: readonly string[]): ProtectedSnapshot {
    const real = paths.map(realParent);
    const before = new Map<string, Entry>();
    const handled: string[] = [];
    const used: Baseline[] = [];
    for (const [index, path] of real.entries()) {
      let baseline = this.covering(path);
      if (baseline === undefined) {
        const writer = [...this.holders].some((holder) => holder.writable.some((dir) => under(dir, path)));
        baseline = { entries: new Map(), trusted: !writer };
        walk(path, baseline.entries);
        // What a held baseline below it has stands as it was then, not as a running command left it.
        for (const [root, held] of this.baselines) if (under(path, root)) for (const [entryPath, entry] of held.entries) baseline.entries.set(entryPath, entry);
        this.baselines.set(path, baseline);
      }
      for (const [entryPath, entry] of baseline.entries) if (under(path, entryPath)) before.set(entryPath, entry);
      if (baseline.trusted) handled.push(paths[index] as string);
      used.push(baseline);
    }
    const holder: Holder = { paths: real, writable: writable.map(bytePath) };
    this.holders.add(holder);
    let released = false;
    const release = (): void => {
      if (released) return;
      released = true;
      this.holders.delete(holder);
      this.dropUnheld();
    };
    return new ProtectedSnapshot(before, handled, release, () => {
      for (const baseline of used) baseline.trusted = false;
    });
  }

  /** Baselines held now (for tests). */
  get size(): number {
    return this.baselines.size;
  }

  /** The held baseline of `path` or of a directory above it (a `hooks` taken whole holds its hooks). */
  private covering(path: string): Baseline | undefined {
    // One that stopped short of it (more entries than a walk keeps) does not cover it: missing
    // there, it would be taken for absent and removed.
    for (const [root, baseline] of this.baselines) if (under(root, path) && baseline.entries.has(path)) return baseline;
    return undefined;
  }

  private dropUnheld(): void {
    for (const root of [...this.baselines.keys()]) {
      const held = [...this.holders].some((holder) => holder.paths.some((path) => under(path, root) || under(root, path)) || holder.writable.some((dir) => under(dir, root)));
      if (!held) this.baselines.delete(root);
    }
  }
}
