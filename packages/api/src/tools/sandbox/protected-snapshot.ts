import { chmodSync, lstatSync, mkdirSync, readdirSync, readFileSync, readlinkSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

/** What a protected path was before a command ran. */
type Entry =
  | { kind: 'absent' }
  /** `content` is kept for files up to MAX_KEPT_BYTES; bigger ones are compared by size and time. */
  | { kind: 'file'; mode: number; signature: string; content?: Buffer }
  | { kind: 'link'; target: string }
  | { kind: 'dir'; mode: number };

/** Protected files bigger than this are compared by size and time only (hooks are scripts; configs are small). */
const MAX_KEPT_BYTES = 4 * 1024 * 1024;
const MAX_ENTRIES = 2000;

function entryOf(path: string): Entry {
  let stats;
  try {
    stats = lstatSync(path);
  } catch {
    return { kind: 'absent' };
  }
  if (stats.isSymbolicLink()) return { kind: 'link', target: readlinkSync(path) };
  if (stats.isDirectory()) return { kind: 'dir', mode: stats.mode & 0o7777 };
  const signature = `${stats.size}:${stats.mtimeMs}`;
  if (stats.isFile() && stats.size <= MAX_KEPT_BYTES) return { kind: 'file', mode: stats.mode & 0o7777, signature, content: readFileSync(path) };
  return { kind: 'file', mode: stats.mode & 0o7777, signature };
}

const same = (a: Entry, b: Entry): boolean => {
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

function put(path: string, entry: Entry): void {
  if (entry.kind === 'file' && entry.content === undefined) throw new Error('too large to keep a copy');
  rmSync(path, { recursive: true, force: true });
  if (entry.kind === 'absent') return;
  mkdirSync(dirname(path), { recursive: true });
  if (entry.kind === 'dir') mkdirSync(path, { mode: entry.mode });
  if (entry.kind === 'link') symlinkSync(entry.target, path);
  if (entry.kind === 'file' && entry.content !== undefined) {
    writeFileSync(path, entry.content, { mode: entry.mode });
    chmodSync(path, entry.mode);
  }
  if (entry.kind === 'dir') chmodSync(path, entry.mode);
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
    for (const path of paths) walk(path, before);
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
