import { sep } from 'node:path';

/**
 * A repository's hooks and config run code the next time anyone uses git there, so no tool may
 * write them: any `hooks` below a `.git` directory (submodules and worktrees have their own), any
 * `config*` file there (`config.worktree` too), nor the `.git` entry itself.
 */
export function isProtectedGitPath(path: string): boolean {
  const parts = path.split(sep);
  const gitIndex = parts.indexOf('.git');
  if (gitIndex < 0) return false;
  const below = parts.slice(gitIndex + 1);
  return below.length === 0 || below.includes('hooks') || (below[below.length - 1] ?? '').startsWith('config');
}
