import { isUtf8 } from 'node:buffer';

/*
 * Paths as byte strings: one character (0-255) per byte of the name on disk, as latin1 decodes it.
 * A file name is bytes, and one that is not UTF-8 (a command can make `odd\xff`) has no Node text
 * string that names it: Node decodes it to U+FFFD, and that path reaches nothing. Code that must
 * reach every name a hostile process can make walks and keys by byte strings, hands the kernel
 * Buffers, and turns back to text only to show a path to people.
 */

/** The byte string of a text path (UTF-8, as Node hands it to the kernel). */
export const bytePath = (text: string): string => Buffer.from(text, 'utf8').toString('latin1');

/** A byte string as the kernel takes it. */
export const pathBytes = (path: string): Buffer => Buffer.from(path, 'latin1');

/** Printable ASCII: any other byte string (control bytes included) takes the Buffer, which is always right. */
const PRINTABLE_ASCII = /^[ -~]*$/;

/** Whether a text or byte string is printable ASCII, the same bytes either way. */
export const isPrintableAscii = (path: string): boolean => PRINTABLE_ASCII.test(path);

/**
 * pathBytes for a hot loop: an ASCII path is its own text (Node sends text as UTF-8, the same
 * bytes), which spares a Buffer per call; the census makes one call per directory of the tree.
 */
export const fsPath = (path: string): string | Buffer => (isPrintableAscii(path) ? path : pathBytes(path));

/** `\xNN` for each byte of a name that is not UTF-8 (and any control byte in it), so the name stays unambiguous. */
const escaped = (name: Buffer): string => [...name].map((byte) => (byte >= 0x20 && byte < 0x7f && byte !== 0x5c ? String.fromCharCode(byte) : `\\x${byte.toString(16).padStart(2, '0')}`)).join('');

/** A byte string for a message: UTF-8 names as text, any other name spelled byte by byte (`odd\xff`). */
export function shownPath(path: string): string {
  const bytes = pathBytes(path);
  if (isUtf8(bytes)) return bytes.toString('utf8');
  return path
    .split('/')
    .map((name) => {
      const nameBytes = pathBytes(name);
      return isUtf8(nameBytes) ? nameBytes.toString('utf8') : escaped(nameBytes);
    })
    .join('/');
}
