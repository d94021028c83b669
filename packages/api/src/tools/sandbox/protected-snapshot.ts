import { closeSync, constants, fchmodSync, lstatSync, mkdirSync, openSync, readdirSync, readFileSync, readlinkSync, realpathSync, rmSync, symlinkSync, writeSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { bytePath, pathBytes } from '../../util/byte-path.js';
import { walkToParent } from '../../util/held-dir.js';

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

export function entryOf(path: string): Entry {
  let stats;
  try {
    stats = lstatSync(path);
  } catch {
    return { kind: 'absent' };
  }
  if (stats.isSymbolicLink()) return { kind: 'link', target: readlinkSync(path, { encoding: 'buffer' }).toString('latin1') };
  if (stats.isDirectory()) return { kind: 'dir', mode: stats.mode & 0o7777 };
  const signature = `${stats.size}:${stats.mtimeMs}`;
  if (stats.isFile() && stats.size <= MAX_KEPT_BYTES) return { kind: 'file', mode: stats.mode & 0o7777, signature, content: readFileSync(path) };
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

/** The path and, for a directory (hooks), everything below it. */
function walk(path: string, out: Map<string, Entry>): void {
  const entry = entryOf(path);
  out.set(path, entry);
  if (entry.kind !== 'dir' || out.size > MAX_ENTRIES) return;
  for (const name of readdirSync(path)) walk(join(path, name), out);
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

/** `put` for a path that is a byte string already (util/byte-path.ts): the repository census's. */
export function putBytes(path: string, entry: Entry): void {
  if (entry.kind === 'file' && entry.content === undefined) throw new Error('too large to keep a copy');
  const walked = walkToParent('/', path.slice(1), true);
  if (!('dir' in walked)) return; // never with `make`
  const { dir, name } = walked;
  try {
    rmSync(dir.entry(name), { recursive: true, force: true });
    if (entry.kind === 'dir') mkdirSync(dir.entry(name), { mode: entry.mode });
    if (entry.kind === 'link') symlinkSync(pathBytes(entry.target), dir.entry(name));
    if (entry.kind === 'dir' || entry.kind === 'file') {
      const flags = entry.kind === 'dir' ? constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW : constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW;
      const fd = openSync(dir.entry(name), flags, entry.mode);
      try {
        if (entry.kind === 'file' && entry.content !== undefined) writeAll(fd, entry.content);
        fchmodSync(fd, entry.mode);
      } finally {
        closeSync(fd);
      }
    }
  } finally {
    dir.close();
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
    return join(realpathSync(dirname(path)), basename(path));
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

  static take(paths: readonly string[]): ProtectedSnapshot {
    const before = new Map<string, Entry>();
    for (const path of paths) walk(realParent(path), before);
    return new ProtectedSnapshot(before);
  }

  /** Puts back every changed path; returns the ones it restored, sorted. */
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
        put(path, was);
        restored.push(path);
      } catch {
        restored.push(`${path} (could not be restored)`);
      }
    }
    return restored;
  }
}
