import { randomBytes } from 'node:crypto';
import { closeSync, constants, fchmodSync, lstatSync, mkdirSync, openSync, readdirSync, readFileSync, readlinkSync, realpathSync, renameSync, rmSync, symlinkSync, writeSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { bytePath, fsPath, pathBytes, shownPath } from '../../util/byte-path.js';
import { walkToParent, type HeldDir } from '../../util/held-dir.js';

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
    else if (entry.kind === 'link') replace(dir, name, (temporary) => symlinkSync(pathBytes(entry.target), temporary));
    else replace(dir, name, (temporary) => writeNew(temporary, entry.content ?? Buffer.alloc(0), entry.mode));
  } finally {
    dir.close();
  }
}

/**
 * The temporary names `putBytes` writes under, beside the target: the guards skip them in a
 * directory they walk (`hooks`), as git does (it runs a hook only by its exact name). A concurrent
 * check that took one for a planted hook would delete it before it is renamed into place.
 */
const TEMPORARY_PREFIX = '.mada-put-back-';
export const isPutBackTemporary = (name: string): boolean => name.startsWith(TEMPORARY_PREFIX);

/** Makes a new entry with `make` under a fresh name in `dir` and renames it over `name`. */
function replace(dir: HeldDir, name: string, make: (temporary: Buffer) => void): void {
  const temporary = `${TEMPORARY_PREFIX}${randomBytes(8).toString('hex')}`;
  make(dir.entry(temporary));
  try {
    try {
      renameSync(dir.entry(temporary), dir.entry(name));
    } catch (error) {
      // Only a directory the command left where a file or link was stops a rename over it: that
      // one goes first (the target was wrong already, never a file another command keeps).
      if (dir.stat(name)?.isDirectory() !== true) throw error;
      rmSync(dir.entry(name), { recursive: true, force: true });
      renameSync(dir.entry(temporary), dir.entry(name));
    }
  } catch (error) {
    rmSync(dir.entry(temporary), { force: true });
    throw error;
  }
}

/** A new file (never one a link or a planted name leads to) with `content` and `mode`. */
function writeNew(path: Buffer, content: Buffer, mode: number): void {
  const fd = openSync(path, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o600);
  try {
    writeAll(fd, content);
    fchmodSync(fd, mode);
  } finally {
    closeSync(fd);
  }
}

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

function writeAll(fd: number, content: Buffer): void {
  for (let written = 0; written < content.length; ) written += writeSync(fd, content, written, content.length - written);
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
  private constructor(private readonly before: Map<string, Entry>) {}

  /** `paths` are byte strings (util/byte-path.ts): a protected path may be named by bytes that are not UTF-8. */
  static take(paths: readonly string[]): ProtectedSnapshot {
    const before = new Map<string, Entry>();
    for (const path of paths) walk(realParent(path), before);
    return new ProtectedSnapshot(before);
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
