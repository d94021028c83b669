import { lstatSync, readdirSync, type Stats } from 'node:fs';
import { join } from 'node:path';
import { openCheckedForWriting } from './checked-open.js';
import { isProtectedGitPath, writesGitDirectoryLayout } from './sandbox/protected-paths.js';
import { protectedPathsFor } from './sandbox/tool-sandbox.js';
import { floorAdvice, floorBreach, servicePlaces } from './sandbox/disk-floor.js';
import type { ToolContext } from './tool.js';
import { errnoCode, ToolError } from './tool-errors.js';
import { shownPath } from '../util/byte-path.js';
import { errorMessage } from '../util/error-message.js';

/**
 * The real path a write tool may write for `path` (relative paths are taken from the working
 * directory): inside the sandbox, not a git hook or git configuration file, not the service's .env.
 */
export function writablePath(path: string, context: ToolContext): string {
  const real = context.sandbox.resolve(path, context.workingDir);
  if (isProtectedGitPath(path) || isProtectedGitPath(real) || writesGitDirectoryLayout(real)) throw new ToolError(`Refusing to write git hooks or configuration: ${path}`);
  if (context.sandbox.isProtectedFile(real)) throw new ToolError(`Refusing to write the service's own settings file: ${path}`);
  return real;
}

export function checkWriteSize(bytes: number, maxBytes: number): void {
  if (bytes > maxBytes) throw new ToolError(`File too large: ${bytes} bytes (max ${maxBytes})`);
}

const sameFile = (stats: Stats, path: string | Buffer): boolean => {
  const other = lstatSync(path, { throwIfNoEntry: false });
  return other !== undefined && other.isFile() && other.dev === stats.dev && other.ino === stats.ino;
};

/**
 * The protected file among `paths` (a directory's entries included: hooks) that is the file `stats`
 * describes, and among `known` (the repository census's files, as bytes: a name that is not UTF-8
 * has no text path).
 */
function protectedFileMatching(stats: Stats, paths: readonly string[], known: readonly Buffer[]): string | undefined {
  for (const path of paths) {
    if (sameFile(stats, path)) return path;
    if (lstatSync(path, { throwIfNoEntry: false })?.isDirectory()) {
      const inside = readdirSync(path).map((name) => join(path, name)).find((entry) => sameFile(stats, entry));
      if (inside !== undefined) return inside;
    }
  }
  const knownFile = known.find((path) => sameFile(stats, path));
  return knownFile === undefined ? undefined : shownPath(knownFile.toString('latin1'));
}

/**
 * Writes `content` to the real path `path`, opened where it was checked (openCheckedForWriting):
 * a link swapped in after the sandbox check fails the write. The file is opened before it is cut:
 * a second name (hard link) of a protected file passes every check by name, so the opened file
 * itself is compared with the protected ones, and only then truncated.
 */
export async function writeRealFile(path: string, content: string, context: ToolContext): Promise<void> {
  await keepDiskFloor(path, context);
  const handle = await openCheckedForWriting(path);
  try {
    const stats = await handle.stat();
    // Every repository under the allowed paths, not only the ones around the working directory.
    const known = stats.nlink > 1 ? await context.host.repositories.knownFiles(context.sandbox) : [];
    // A census that stopped at its cap does not know every repository's files: any of them may be this one.
    if (known === undefined) throw new ToolError(`Refusing to write ${path}: it has another name (hard link), and the tree under the allowed paths is too big to tell whether that is a git repository's hooks or configuration`);
    const target = stats.nlink > 1 ? protectedFileMatching(stats, protectedPathsFor(context, context.workingDir), known) : undefined;
    if (target !== undefined) throw new ToolError(`Refusing to write ${path}: it is another name (hard link) of the protected file ${target}`);
    await handle.truncate(0);
    await handle.writeFile(content, 'utf8');
  } finally {
    await handle.close();
  }
}

/**
 * Below the free-space floor (disk-floor.ts) of the file's file system or the service's data, no
 * write: each is at most MAX_WRITE_BYTES, but an agent can call the tool in a loop, and a smaller
 * edit is refused alike, one rule being easier to tell than the size it would free.
 */
async function keepDiskFloor(path: string, context: ToolContext): Promise<void> {
  const reason = await floorBreach([{ path, name: path }, ...servicePlaces(context.settings)], context.settings);
  if (reason !== undefined) throw new ToolError(`Refusing to write ${path}: ${floorAdvice(reason)}`);
}

/** The texts of write failures, kept word for word from the original service. */
export function writeErrorMessage(error: unknown, path: string): string {
  const code = errnoCode(error);
  if (code === 'EACCES' || code === 'EPERM') return `Permission denied: ${path}`;
  const text = errorMessage(error);
  return code === undefined ? `Error writing file: ${text}` : `OS error writing file: ${text}`;
}

/** Lines as an editor counts them: a final line without a newline counts, an empty file has none. */
export const countLines = (content: string): number =>
  content === '' ? 0 : content.split('\n').length - (content.endsWith('\n') ? 1 : 0);
