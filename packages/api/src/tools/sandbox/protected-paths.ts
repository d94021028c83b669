import { lstatSync } from 'node:fs';
import { basename, dirname, join, sep } from 'node:path';

/**
 * A repository's hooks and config run code the next time anyone uses git there, so no tool may
 * write them: any `hooks` below a `.git` directory (submodules and worktrees have their own), any
 * `config*` file there (`config.worktree` too), `commondir` (which points git at another
 * repository's config), the `.git` entry itself, and `.gitmodules` (submodule URLs and commands).
 */
export function isProtectedGitPath(path: string): boolean {
  if (basename(path) === '.gitmodules') return true;
  const parts = path.split(sep);
  const gitIndex = parts.indexOf('.git');
  if (gitIndex < 0) return false;
  const below = parts.slice(gitIndex + 1);
  const last = below[below.length - 1] ?? '';
  return below.length === 0 || below.includes('hooks') || last.startsWith('config') || last === 'commondir';
}

const exists = (path: string): boolean => lstatSync(path, { throwIfNoEntry: false }) !== undefined;

/**
 * Whether writing the real path `real` would write a git directory that is not named `.git` (a bare
 * repository, a moved `.git`, the target of a `gitdir:` file) or make one out of planted files:
 * `config`, `config.worktree` or a hook beside a `HEAD`, a `HEAD` beside a `config` or `hooks`,
 * and `commondir` anywhere (it hands git another directory's config). git outside the sandbox
 * obeys such a directory as readily as a `.git`.
 */
export function writesGitDirectoryLayout(real: string): boolean {
  const name = basename(real);
  const dir = dirname(real);
  if (name === 'commondir') return true;
  if ((name === 'config' || name === 'config.worktree') && exists(join(dir, 'HEAD'))) return true;
  if (name === 'HEAD' && (exists(join(dir, 'config')) || exists(join(dir, 'hooks')))) return true;
  const parts = real.split(sep);
  return parts.some((part, i) => part === 'hooks' && i > 0 && exists(join(parts.slice(0, i).join(sep) || sep, 'HEAD')));
}
