import { stat } from 'node:fs/promises';
import type { Stats } from 'node:fs';
import type { ToolContext } from './tool.js';
import { errnoCode, ToolError } from './tool-errors.js';

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
