import { closeSync, constants, fstatSync, openSync, readSync, type Stats } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';

/*
 * Files the working directory supplies (ignore files above all) are read through these: opened
 * without blocking, so a FIFO planted under the name cannot hang the read (a synchronous one
 * would stop the event loop; an asynchronous one would hold a libuv thread for good, and four
 * of them every file operation of the service), then judged by what was opened, not by a
 * lstat before it that a concurrent process could make stale.
 */

const FLAGS = constants.O_RDONLY | constants.O_NONBLOCK;

/** The file's bytes if it is a regular file of at most `maxBytes`; undefined for anything else or any error. */
export function readRegularFileSync(path: string | Buffer, maxBytes: number): Buffer | undefined {
  return readRegularFileWithStatsSync(path, maxBytes)?.bytes;
}

/**
 * readRegularFileSync with the stats of what was read; `noFollow` refuses a symbolic link in the
 * last place of the path (the file itself, not a link to one, is what the caller means to read).
 */
export function readRegularFileWithStatsSync(path: string | Buffer, maxBytes: number, noFollow = false): { bytes: Buffer; stats: Stats } | undefined {
  let fd: number;
  try {
    fd = openSync(path, noFollow ? FLAGS | constants.O_NOFOLLOW : FLAGS);
  } catch {
    return undefined;
  }
  try {
    const stats = fstatSync(fd);
    if (!stats.isFile() || stats.size > maxBytes) return undefined;
    // One byte more than it had: a file that grew since the fstat is refused, not cut.
    const buffer = Buffer.alloc(stats.size + 1);
    let length = 0;
    for (let read = -1; read !== 0 && length < buffer.length; length += read) read = readSync(fd, buffer, length, buffer.length - length, null);
    return length > stats.size ? undefined : { bytes: buffer.subarray(0, length), stats };
  } catch {
    return undefined;
  } finally {
    closeSync(fd);
  }
}

/**
 * At most the first `maxBytes` of a regular file (opened without blocking), undefined for
 * anything else or any error: for files whose meaning is in their first bytes (a `gitdir:` file),
 * which a command may have padded to gigabytes.
 */
export function readRegularFilePrefixSync(path: string | Buffer, maxBytes: number): Buffer | undefined {
  let fd: number;
  try {
    fd = openSync(path, FLAGS);
  } catch {
    return undefined;
  }
  try {
    if (!fstatSync(fd).isFile()) return undefined;
    const buffer = Buffer.alloc(maxBytes);
    let length = 0;
    for (let read = -1; read !== 0 && length < buffer.length; length += read) read = readSync(fd, buffer, length, buffer.length - length, null);
    return buffer.subarray(0, length);
  } catch {
    return undefined;
  } finally {
    closeSync(fd);
  }
}

/** readRegularFileSync without blocking the event loop. */
export async function readRegularFile(path: string, maxBytes: number): Promise<Buffer | undefined> {
  let handle;
  try {
    handle = await open(path, FLAGS);
  } catch {
    return undefined;
  }
  try {
    return await readOpenRegularFile(handle, maxBytes);
  } catch {
    return undefined;
  } finally {
    await handle.close();
  }
}

/**
 * The bytes of an open file if it is a regular file of at most `maxBytes`, else undefined. Never
 * more than that is held in memory: a file that grows while it is read (or a sparse one of a
 * terabyte) is refused, not read into the service.
 */
export async function readOpenRegularFile(handle: FileHandle, maxBytes: number): Promise<Buffer | undefined> {
  const stats = await handle.stat();
  if (!stats.isFile() || stats.size > maxBytes) return undefined;
  // One byte more than it had: a file that grew since the fstat is refused, not cut.
  const buffer = Buffer.alloc(stats.size + 1);
  let length = 0;
  for (let read = -1; read !== 0 && length < buffer.length; length += read) ({ bytesRead: read } = await handle.read(buffer, length, buffer.length - length, null));
  return length > stats.size ? undefined : buffer.subarray(0, length);
}
