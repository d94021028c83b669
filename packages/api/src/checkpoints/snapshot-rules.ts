import { isAbsolute, relative, sep } from 'node:path';
import { DEFAULT_IGNORED_DIRS } from '../tools/search/backend.js';

/**
 * What the service keeps out of every snapshot, whatever the working directory's ignore files say:
 * the directories glob_files skips at any depth (`.git` among them, so a nested repository's
 * internals are never read), and the excluded paths (DATA_DIR, the database files, the service's
 * `.env`). Paths are relative to the working directory, `/`-separated, as byte strings (`latin1`,
 * one character per byte: git's paths need not be UTF-8).
 */
export class SnapshotRules {
  /** Excluded paths below the working directory; '' when the working directory itself lies in one. */
  private readonly excluded: string[];

  constructor(workingDir: string, excludedPaths: readonly string[]) {
    this.excluded = excludedPaths.flatMap((path) => {
      if (!leavesDir(relative(path, workingDir))) return ['']; // the working directory or one above it
      const inside = relative(workingDir, path);
      return leavesDir(inside) ? [] : [asBytes(inside.split(sep).join('/'))];
    });
  }

  /** Whether the path is never snapshotted. */
  hides(path: string): boolean {
    const parts = path.split('/');
    if (parts.includes('.git') || parts.slice(0, -1).some((part) => IGNORED_DIR_NAMES.has(part))) return true;
    return this.excluded.some((dir) => dir === '' || path === dir || path.startsWith(`${dir}/`));
  }

  /**
   * The shadow repository's `info/exclude`: the outer `.gitignore` rules (see outer-ignores.ts) and
   * those of the `.ignore` and `.rgignore` files (search-ignores.ts), then
   * the same rules as `hides`, so git does not even walk those directories. For those only a
   * shortcut: a `.gitignore` in the working directory outranks that file and
   * can re-include them, so what git lists still goes through `hides`.
   */
  excludeFile(translatedLines: readonly string[]): string {
    const lines = ['# Written by mada. Rules of ignore files git does not read (outer .gitignore, .ignore, .rgignore):', ...translatedLines];
    lines.push('# Never snapshotted, whatever the working directory says:', ...DEFAULT_IGNORED_DIRS.map((name) => `${name}/`));
    for (const dir of this.excluded) {
      if (dir === '') lines.push('/*');
      else if (!dir.includes('\n')) lines.push(`/${escapePattern(dir)}`);
    }
    return `${lines.join('\n')}\n`;
  }
}

const IGNORED_DIR_NAMES = new Set(DEFAULT_IGNORED_DIRS);

/** Whether a relative path (from `path.relative`) leads out of its starting directory. */
const leavesDir = (rel: string): boolean => rel === '..' || rel.startsWith(`..${sep}`) || isAbsolute(rel);

/** A path as git's byte string (see SnapshotRules). */
export const asBytes = (path: string): string => Buffer.from(path, 'utf8').toString('latin1');

/** A path as a gitignore pattern that matches it literally. */
export function escapePattern(path: string): string {
  const special = path.replace(/[\\*?[]/g, (char) => `\\${char}`);
  // Trailing spaces counted, not matched with / +$/: that tried each run of spaces inside the
  // name up to its end, quadratic in a directory name made of spaces.
  let end = special.length;
  while (end > 0 && special[end - 1] === ' ') end--;
  const escaped = special.slice(0, end) + '\\ '.repeat(special.length - end);
  return /^[!#]/.test(escaped) ? `\\${escaped}` : escaped;
}
