import { createHash, randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { deflateSync, inflateSync } from 'node:zlib';

/**
 * Objects and refs of a shadow repository written the way git stores them loose (a zlib-deflated
 * object under `objects/`, a ref as a file holding an object id), without starting git: each git
 * process costs a few milliseconds, and a run's two snapshots must cost about one `git status`
 * each. Shadow repositories are created by the service with SHA-1 object names. The files are
 * small (refs, commits and trees a few bytes to a few KiB; a snapshot writes at most 1 MiB of
 * blobs this way) in the service's own DATA_DIR: written synchronously, at a tenth of the cost of
 * the asynchronous calls.
 */

/** A shadow ref: HEAD, or one under refs/ made of plain name characters. */
const REF_NAME = /^(HEAD|refs(\/[A-Za-z0-9_-][A-Za-z0-9._-]*)+)$/;

const OBJECT_ID = /^[0-9a-f]{40}$/;

/** The tree of no files, which git knows without storing it. */
export const EMPTY_TREE = '4b825dc642cb6eb9a060e54bf8d69288fbee4904';

const IDENTITY = 'mada <mada@localhost> 0 +0000';

/** Writes `data` to `path` through a temporary file in the same directory, so readers see all or nothing. */
function replaceFile(path: string, data: string | Buffer, temporary: string): void {
  try {
    try {
      writeFileSync(temporary, data, { flag: 'wx' });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
      mkdirSync(dirname(path), { recursive: true });
      writeFileSync(temporary, data, { flag: 'wx' });
    }
    renameSync(temporary, path);
  } catch (error) {
    rmSync(temporary, { force: true });
    throw error;
  }
}

const unique = (): string => `${process.pid}-${randomBytes(6).toString('hex')}`;

/** The object types a shadow repository's own code stores (tags are never made). */
export type ObjectType = 'blob' | 'tree' | 'commit';

const objectPath = (gitDir: string, id: string): string => join(gitDir, 'objects', id.slice(0, 2), id.slice(2));

/** The object id of a whole object (header and body). */
const idOf = (object: Buffer): string => createHash('sha1').update(object).digest('hex');

/** The id `body` has as an object of `type`, as git names it, whether stored or not. */
export const objectId = (type: ObjectType, body: Buffer): string => idOf(Buffer.concat([Buffer.from(`${type} ${body.length}\0`), body]));

/** Stores `body` as an object of `type`, unless it already is stored loose; its id. */
export function writeObject(gitDir: string, type: ObjectType, body: Buffer): string {
  const object = Buffer.concat([Buffer.from(`${type} ${body.length}\0`), body]);
  const id = idOf(object);
  const path = objectPath(gitDir, id);
  // git's own prefix for objects being written: `git gc` clears any left by a crash.
  if (!existsSync(path)) replaceFile(path, deflateSync(object), join(dirname(path), `tmp_obj_${unique()}`));
  return id;
}

/**
 * The body of a loose object of `type`, checked against its id; undefined when it is not stored
 * loose (`git gc` packs objects), is of another type or does not match its id.
 */
export function readLooseObject(gitDir: string, type: ObjectType, id: string): Buffer | undefined {
  if (!OBJECT_ID.test(id)) return undefined;
  let object: Buffer;
  try {
    object = inflateSync(readFileSync(objectPath(gitDir, id)));
  } catch {
    return undefined;
  }
  const header = Buffer.from(`${type} `);
  const nul = object.indexOf(0);
  if (nul < 0 || !object.subarray(0, header.length).equals(header)) return undefined;
  if (Number(object.subarray(header.length, nul).toString('latin1')) !== object.length - nul - 1) return undefined;
  return idOf(object) === id ? object.subarray(nul + 1) : undefined;
}

/**
 * A commit of `tree` (fixed author and date, so one tree always gives the same commit), stored
 * unless it already is; its id.
 */
export function writeCommit(gitDir: string, tree: string): string {
  if (!OBJECT_ID.test(tree)) throw new Error(`not a SHA-1 tree id: ${tree}`);
  return writeObject(gitDir, 'commit', Buffer.from(`tree ${tree}\nauthor ${IDENTITY}\ncommitter ${IDENTITY}\n\nmada snapshot\n`));
}

/** Points `name` at `id` (HEAD is detached). */
export function writeRef(gitDir: string, name: string, id: string): void {
  if (!REF_NAME.test(name) || name.includes('..') || name.split('/').some((part) => part.endsWith('.lock'))) throw new Error(`not a shadow ref name: ${name}`);
  if (!OBJECT_ID.test(id)) throw new Error(`not a SHA-1 object id: ${id}`);
  const path = join(gitDir, name);
  // A name ending in `.lock` is never read as a ref by git.
  replaceFile(path, `${id}\n`, `${path}.${unique()}.lock`);
}
