import { sep } from 'node:path';

/**
 * Whether writing `path` could make git run code or change how it behaves: hooks and config of a
 * repository (also of submodules and worktrees, which live below `.git/`), or a `.git` file that
 * points git at another directory. No tool writes these (DECISIONS.md, shell policy).
 */
export function isProtectedGitPath(path: string): boolean {
  const parts = path.split(sep);
  const gitIndex = parts.indexOf('.git');
  if (gitIndex === -1) return false;
  const inside = parts.slice(gitIndex + 1);
  const last = inside[inside.length - 1];
  return inside.length === 0 || inside.includes('hooks') || last === 'config' || last === 'config.worktree';
}

export const gitPathRefusal = (path: string): string => `Refusing to write git hooks or configuration: ${path}`;
