import { createHash } from 'node:crypto';

/*
 * git's index file (Documentation/gitformat-index.txt), read and rewritten in the service rather
 * than by running git: git over the user's repository outside the sandbox would obey its config,
 * and inside the sandbox it costs a process per command. Versions 2 to 4 are read; what this code
 * cannot read faithfully (a split index, sparse directory entries, another version) is `undefined`.
 */

const SIGNATURE = 'DIRC';
const HEADER_BYTES = 12;
/** ctime, mtime (seconds and nanoseconds), dev, ino, mode, uid, gid, size: ten 32-bit fields. */
const STAT_BYTES = 40;
const MODE_OFFSET = 24;
const EXTENDED_FLAG = 0x4000;
const MODE_TYPE = 0o170000;
const GITLINK = 0o160000;

/** One entry; its path is latin1, so its bytes come back unchanged when written. */
export class IndexEntry {
  constructor(
    private readonly data: Buffer,
    /** The name's offsets in `data` (versions 2 and 3), or the name (version 4: prefix-compressed). */
    private readonly nameAt: number,
    private readonly nameEnd: number,
    private readonly name: string | undefined,
    readonly mode: number,
    private readonly start: number,
    private readonly fixedEnd: number,
    readonly extended: boolean,
  ) {}

  /** The entry's fixed fields (stat data, object name, flags and extended flags), as stored. */
  get fixed(): Buffer {
    return this.data.subarray(this.start, this.fixedEnd);
  }

  /** Versions 2 and 3 decode a name only when asked: most are never needed, and 100,000 cost milliseconds. */
  get path(): string {
    return this.name ?? this.data.toString('latin1', this.nameAt, this.nameEnd);
  }
}

export interface GitIndex {
  entries: IndexEntry[];
  hashBytes: number;
}

/** git's offset varint (v4 path prefix lengths): 7 bits a byte, each continuation adding one. */
function readVarint(data: Buffer, at: number): { value: number; next: number } {
  let byte = data[at++] ?? 0;
  let value = byte & 0x7f;
  while (byte & 0x80) {
    byte = data[at++] ?? 0;
    // Multiplied, not shifted: a long run of continuation bytes must not wrap to a negative length.
    value = Math.min(Number.MAX_SAFE_INTEGER, (value + 1) * 128 + (byte & 0x7f));
  }
  return { value, next: at };
}

/**
 * Version 4 names are each the previous one with some bytes cut off its end and others added: a
 * file of N short entries can stand for N names of N bytes each. A real index's names decode to a
 * few times its size at most; past this budget the file was written to be expensive, not by git.
 */
const NAME_BUDGET_FACTOR = 8;
const NAME_BUDGET_SLACK = 1024 * 1024;
const NAME_BUDGET_LIMIT = 256 * 1024 * 1024;
const nameBudgetOf = (fileBytes: number): number => Math.min(NAME_BUDGET_LIMIT, fileBytes * NAME_BUDGET_FACTOR + NAME_BUDGET_SLACK);

/**
 * The running name of a version 4 index, edited in place: cutting and appending cost what is
 * appended, never the length of the whole name, so reading stays linear in the file's size.
 */
class RunningName {
  private bytes = Buffer.alloc(256);
  private length = 0;

  get size(): number {
    return this.length;
  }

  /** Cuts `strip` bytes off the end and appends `data[from, to)`. */
  replaceEnd(strip: number, data: Buffer, from: number, to: number): void {
    const kept = this.length - strip;
    const needed = kept + (to - from);
    if (needed > this.bytes.length) {
      const grown = Buffer.alloc(Math.max(needed, this.bytes.length * 2));
      this.bytes.copy(grown, 0, 0, kept);
      this.bytes = grown;
    }
    data.copy(this.bytes, kept, from, to);
    this.length = needed;
  }

  toString(): string {
    return this.bytes.toString('latin1', 0, this.length);
  }
}

/** Parses an index whose object names are `hashBytes` long (20 for SHA-1, 32 for SHA-256). */
export function parseIndex(data: Buffer, hashBytes: number): GitIndex | undefined {
  if (data.length < HEADER_BYTES + hashBytes || data.toString('latin1', 0, 4) !== SIGNATURE) return undefined;
  const version = data.readUInt32BE(4);
  if (version < 2 || version > 4) return undefined;
  const count = data.readUInt32BE(8);
  const end = data.length - hashBytes;
  const entries: IndexEntry[] = [];
  let at = HEADER_BYTES;
  const running = new RunningName();
  let nameBudget = nameBudgetOf(data.length);
  for (let i = 0; i < count; i++) {
    const start = at;
    const flagsAt = start + STAT_BYTES + hashBytes;
    if (flagsAt + 2 > end) return undefined;
    const extended = version >= 3 && (data.readUInt16BE(flagsAt) & EXTENDED_FLAG) !== 0;
    at = flagsAt + (extended ? 4 : 2);
    let path: string;
    let nameAt = 0;
    let nameEnd = 0;
    if (version === 4) {
      const strip = readVarint(data, at);
      const nul = data.indexOf(0, strip.next);
      if (nul < 0 || nul >= end || strip.value > running.size) return undefined;
      running.replaceEnd(strip.value, data, strip.next, nul);
      nameBudget -= running.size;
      if (nameBudget < 0) return undefined;
      path = running.toString();
      at = nul + 1;
    } else {
      const nul = data.indexOf(0, at);
      if (nul < 0 || nul >= end) return undefined;
      path = '';
      nameAt = at;
      nameEnd = nul;
      // Padded with one to eight NULs to a multiple of eight bytes from the entry's start.
      at = start + ((nul - start + 8) & ~7);
    }
    const mode = data.readUInt32BE(start + MODE_OFFSET);
    // A sparse directory entry stands for a whole tree this code cannot see into.
    if ((mode & MODE_TYPE) === 0o040000) return undefined;
    entries.push(new IndexEntry(data, nameAt, nameEnd, version === 4 ? path : undefined, mode, start, flagsAt + (extended ? 4 : 2), extended));
  }
  // Extensions: an upper-case first letter is optional; a lower-case one (`link`: split index,
  // `sdir`) changes what the entries mean, so the index is not one this code can judge.
  while (at + 8 <= end) {
    const signature = data.toString('latin1', at, at + 4);
    if (!/^[A-Z]/.test(signature)) return undefined;
    at += 8 + data.readUInt32BE(at + 4);
  }
  return { entries, hashBytes };
}

/** The gitlinks (mode 160000: a commit of another repository, entered by `git status`). */
export const gitlinksOf = (index: GitIndex): string[] => index.entries.filter((e) => (e.mode & MODE_TYPE) === GITLINK).map((e) => e.path);

/**
 * The index without `paths`, as version 2 (3 when an entry has extended flags) with no
 * extensions: they are caches (the cache tree, the untracked cache) git rebuilds, or a
 * merge's resolve-undo record.
 */
export function serializeIndex(index: GitIndex, without: ReadonlySet<string>): Buffer {
  const kept = index.entries.filter((e) => !without.has(e.path));
  // One buffer of the final size: a part per entry cost the heap several objects per entry.
  const sizes = kept.map((entry) => (entry.fixed.length + entry.path.length + 8) & ~7);
  const bodyBytes = sizes.reduce((sum, size) => sum + size, HEADER_BYTES);
  const hashBytes = index.hashBytes;
  const out = Buffer.alloc(bodyBytes + hashBytes);
  out.write(SIGNATURE, 0, 'latin1');
  out.writeUInt32BE(kept.some((e) => e.extended) ? 3 : 2, 4);
  out.writeUInt32BE(kept.length, 8);
  let at = HEADER_BYTES;
  kept.forEach((entry, i) => {
    const { fixed } = entry;
    fixed.copy(out, at);
    // The rest of the entry stays zero: the name's NUL and the padding.
    out.write(entry.path, at + fixed.length, 'latin1');
    at += sizes[i] as number;
  });
  const algorithm = hashBytes === 32 ? 'sha256' : 'sha1';
  createHash(algorithm).update(out.subarray(0, bodyBytes)).digest().copy(out, bodyBytes);
  return out;
}
