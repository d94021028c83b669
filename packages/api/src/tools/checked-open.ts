import { constants, existsSync, readlinkSync } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import { basename, dirname } from 'node:path';
import { ToolError } from './tool-errors.js';

/**
 * Opening the real path a sandbox check returned, so that what is opened is what was checked.
 * Between the check and the open, a process of another tool call (a concurrent run's `bash`) can
 * swap a directory on the way for a symbolic link to anywhere; the kernel would follow it. On
 * Linux the descriptor tells which file was really opened (`/proc/self/fd/N`), and a directory
 * descriptor pins the parent so a new file is made only there.
 */

const FD_DIR = '/proc/self/fd';
/** Elsewhere (policy-only development on another OS) the plain open is all there is. */
const CAN_PIN = existsSync(FD_DIR);

const heldPath = (handle: FileHandle): string => readlinkSync(`${FD_DIR}/${handle.fd}`);

const swapped = (path: string): ToolError =>
  new ToolError(`Path changed while it was being opened: ${path} (a directory on the way was replaced, for example by a symbolic link)`);

/** Opens `real` for reading; refuses if the kernel opened another file (a parent swapped for a link). */
export async function openCheckedForReading(real: string): Promise<FileHandle> {
  // O_NONBLOCK: a FIFO swapped in after the check must not hang the open.
  const handle = await open(real, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  if (CAN_PIN && heldPath(handle) !== real) {
    await handle.close();
    throw swapped(real);
  }
  return handle;
}

/**
 * Opens (creating if needed, never truncating) `real` for writing inside the very directory that
 * was checked: the directory is opened first and compared, then the file is opened through its
 * descriptor, so nothing is created or written anywhere else. O_NOFOLLOW: a link in the file's
 * own place fails the open.
 */
export async function openCheckedForWriting(real: string): Promise<FileHandle> {
  const flags = constants.O_WRONLY | constants.O_CREAT | constants.O_NOFOLLOW | constants.O_NONBLOCK;
  if (!CAN_PIN) return open(real, flags, 0o666);
  const parent = await open(dirname(real), constants.O_RDONLY | constants.O_DIRECTORY);
  try {
    if (heldPath(parent) !== dirname(real)) throw swapped(real);
    return await open(`${FD_DIR}/${parent.fd}/${basename(real)}`, flags, 0o666);
  } finally {
    await parent.close();
  }
}
