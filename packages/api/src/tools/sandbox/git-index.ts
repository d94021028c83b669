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
    value = ((value + 1) << 7) | (byte & 0x7f);
  }
  return { value, next: at };
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
  let previous = '';
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
      if (nul < 0 || nul >= end || strip.value > previous.length) return undefined;
      path = previous.slice(0, previous.length - strip.value) + data.toString('latin1', strip.next, nul);
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
    previous = path;
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
  const header = Buffer.alloc(HEADER_BYTES);
  header.write(SIGNATURE, 0, 'latin1');
  header.writeUInt32BE(kept.some((e) => e.extended) ? 3 : 2, 4);
  header.writeUInt32BE(kept.length, 8);
  const parts: Buffer[] = [header];
  for (const entry of kept) {
    const { fixed } = entry;
    const name = Buffer.from(entry.path, 'latin1');
    const size = (fixed.length + name.length + 8) & ~7;
    parts.push(fixed, name, Buffer.alloc(size - fixed.length - name.length));
  }
  const body = Buffer.concat(parts);
  const algorithm = index.hashBytes === 32 ? 'sha256' : 'sha1';
  return Buffer.concat([body, createHash(algorithm).update(body).digest()]);
}
