import { stat } from 'node:fs/promises';
import type { Stats } from 'node:fs';
import type { Identity } from './sandbox/paths.js';
import type { ToolContext } from './tool.js';
import { errnoCode, ToolError } from './tool-errors.js';

/**
 * Which files a search may show: never DATA_DIR or `.env`, and never a file the approval rules
 * deny this tool. Rules judge the path a call names; a search of a directory above a denied one
 * (a rule on `<project>/secret/**`) reads the files below it, and showed what the rule keeps from a
 * call on each of them. Made once per search: `stats`, a regular file's own lstat when the search
 * took one, spares a second look at the file.
 */
export function shownBySearch(tool: string, context: ToolContext): (path: string, stats?: Identity) => boolean {
  const hidden = context.sandbox.hiddenFilter();
  const denied = context.approval?.rules.deniedPaths(tool);
  if (denied === undefined) return (path, stats) => !hidden(path, stats);
  return (path, stats) => !hidden(path, stats) && !denied(path);
}

/**
 * The real path and file type of a search tool's `path` argument (the working directory when
 * absent), refused with a clear message when it is outside the sandbox or missing.
 */
export async function searchRoot(path: string | undefined, context: ToolContext): Promise<{ root: string; stats: Stats }> {
  const given = path ?? context.workingDir;
  const root = context.sandbox.resolve(given, context.workingDir);
  try {
    return { root, stats: await stat(root) };
  } catch (error) {
    const code = errnoCode(error);
    if (code === 'ENOENT' || code === 'ENOTDIR') throw new ToolError(`Path not found: ${given}`);
    if (code === 'EACCES' || code === 'EPERM') throw new ToolError(`Permission denied: ${given}`);
    throw error;
  }
}
