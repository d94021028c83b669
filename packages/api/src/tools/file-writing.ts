import { constants } from 'node:fs';
import { open } from 'node:fs/promises';
import { isProtectedGitPath } from './sandbox/protected-paths.js';
import type { ToolContext } from './tool.js';
import { errnoCode, ToolError } from './tool-errors.js';
import { errorMessage } from '../util/error-message.js';

/**
 * The real path a write tool may write for `path` (relative paths are taken from the working
 * directory): inside the sandbox, not a git hook or git configuration file, not the service's .env.
 */
export function writablePath(path: string, context: ToolContext): string {
  const real = context.sandbox.resolve(path, context.workingDir);
  if (isProtectedGitPath(path) || isProtectedGitPath(real)) throw new ToolError(`Refusing to write git hooks or configuration: ${path}`);
  if (context.sandbox.isProtectedFile(real)) throw new ToolError(`Refusing to write the service's own settings file: ${path}`);
  return real;
}

export function checkWriteSize(bytes: number, maxBytes: number): void {
  if (bytes > maxBytes) throw new ToolError(`File too large: ${bytes} bytes (max ${maxBytes})`);
}

/**
 * Writes `content` to the real path `path`. O_NOFOLLOW: if a symbolic link was swapped in after the
 * sandbox check, the write fails instead of following it out.
 */
export async function writeRealFile(path: string, content: string): Promise<void> {
  const handle = await open(path, constants.O_WRONLY | constants.O_CREAT | constants.O_TRUNC | constants.O_NOFOLLOW, 0o666);
  try {
    await handle.writeFile(content, 'utf8');
  } finally {
    await handle.close();
  }
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
