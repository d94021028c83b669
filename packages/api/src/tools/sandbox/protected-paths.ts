import { basename, sep } from 'node:path';

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
