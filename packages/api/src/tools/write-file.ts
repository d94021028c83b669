import { lstat, stat } from 'node:fs/promises';
import { dirname } from 'node:path';
import { z } from 'zod';
import { checkWriteSize, countLines, writablePath, writeErrorMessage, writeRealFile } from './file-writing.js';
import { fail, succeed, type Tool, type ToolContext } from './tool.js';
import { errnoCode, failureFor, ToolError } from './tool-errors.js';

const parameters = z.object({
  file_path: z.string().min(1).describe('File to create or overwrite, absolute or relative to the working directory'),
  content: z.string().describe('The complete new content of the file'),
});

async function checkParentDirectory(real: string): Promise<void> {
  const parent = dirname(real);
  const stats = await stat(parent).catch((error: unknown) => {
    if (errnoCode(error) === 'ENOENT' || errnoCode(error) === 'ENOTDIR') throw new ToolError(`Parent directory does not exist: ${parent}`);
    throw error;
  });
  if (!stats.isDirectory()) throw new ToolError(`Parent path is not a directory: ${parent}`);
}

/** Whether `real` exists (so the write overwrites it); a directory or special file there is refused. */
async function existingFile(real: string): Promise<boolean> {
  const stats = await lstat(real).catch((error: unknown) => {
    if (errnoCode(error) === 'ENOENT') return undefined;
    throw error;
  });
  if (stats?.isDirectory()) throw new ToolError(`Path is a directory: ${real}`);
  // Opening a FIFO for writing would wait for a reader forever; devices are not files to replace.
  if (stats && !stats.isFile()) throw new ToolError(`Not a regular file: ${real}`);
  return stats !== undefined;
}

async function write(params: z.output<typeof parameters>, context: ToolContext) {
  const real = writablePath(params.file_path, context);
  const bytes = Buffer.byteLength(params.content, 'utf8');
  checkWriteSize(bytes, context.settings.maxWriteBytes);
  await checkParentDirectory(real);
  const overwritten = await existingFile(real);
  try {
    await writeRealFile(real, params.content, context);
  } catch (error) {
    if (context.signal.aborted || error instanceof ToolError) throw error;
    return fail(writeErrorMessage(error, real));
  }
  const lines = countLines(params.content);
  return succeed(`${overwritten ? 'Overwrote' : 'Created'} ${real} (${bytes} bytes, ${lines} lines)`, {
    file_path: real,
    file_size: bytes,
    lines,
    overwritten,
  });
}

/** write_file: creates or overwrites one file inside the allowed paths, up to MAX_WRITE_BYTES. */
export const writeFileTool: Tool<typeof parameters> = {
  name: 'write_file',
  description:
    'Create a file or replace its whole content. The parent directory must exist. To change part of an existing file, prefer edit_file.',
  parameters,
  readOnly: false,
  modifiesFiles: true,
  startArgs: (params) => ({ file_path: params.file_path }),
  async execute(params, context) {
    try {
      return await write(params, context);
    } catch (error) {
      if (errnoCode(error) !== undefined && !context.signal.aborted) return fail(writeErrorMessage(error, params.file_path));
      return failureFor(error, context.signal);
    }
  },
};
