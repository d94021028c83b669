import { stat } from 'node:fs/promises';
import { isAbsolute, resolve } from 'node:path';
import { z } from 'zod';
import { openCheckedForReading } from './checked-open.js';
import { readLineWindow, type LineWindow } from './line-window.js';
import { counted } from './text.js';
import { fail, succeed, type Tool, type ToolContext } from './tool.js';
import { errnoCode, failureFor, ToolError } from './tool-errors.js';

export const READ_DEFAULT_LIMIT = 2000;
export const READ_MAX_LINE_CHARS = 2000;
/**
 * Most characters of numbered lines one call returns: what the default window of the longest
 * (cut) lines holds, so a window of at most READ_DEFAULT_LIMIT lines is never shortened by it.
 * A larger `limit` on a file of millions of short lines stops here (it held the whole file, a
 * result of 78 MB and 900 MB of the service's memory for a 39 MB file).
 */
export const READ_MAX_WINDOW_CHARS = READ_DEFAULT_LIMIT * (READ_MAX_LINE_CHARS + 64);

const parameters = z.object({
  file_path: z.string().min(1).describe('Absolute path of the file to read'),
  offset: z.number().int().min(0).default(0).describe('Line to start from, 0-based (0 is the first line)'),
  limit: z.number().int().min(1).default(READ_DEFAULT_LIMIT).describe(`How many lines to return (default ${READ_DEFAULT_LIMIT})`),
});

type ReadParams = z.output<typeof parameters>;

/** The real path of a readable regular file, or a ToolError saying why not. */
async function regularFile(filePath: string, context: ToolContext): Promise<string> {
  if (!isAbsolute(filePath)) {
    throw new ToolError(`file_path must be an absolute path, got: ${filePath} (did you mean ${resolve(context.workingDir, filePath)}?)`);
  }
  const real = context.sandbox.resolve(filePath, context.workingDir);
  const stats = await stat(real).catch((error: unknown) => {
    throw readError(error, filePath);
  });
  if (stats.isDirectory()) throw new ToolError(`Path is a directory, not a file: ${filePath} (use glob_files to list it)`);
  if (!stats.isFile()) throw new ToolError(`Not a regular file: ${filePath}`);
  return real;
}

function readError(error: unknown, filePath: string): unknown {
  const code = errnoCode(error);
  if (code === 'ENOENT' || code === 'ENOTDIR') return new ToolError(`File not found: ${filePath}`);
  if (code === 'EACCES' || code === 'EPERM') return new ToolError(`Permission denied: ${filePath}`);
  return error;
}

/** `cat -n`: the number right-aligned in 6 columns, a tab, the line. */
const numbered = (lines: readonly string[], offset: number): string =>
  lines.map((line, i) => `${String(offset + i + 1).padStart(6)}\t${line}`).join('\n');

function render(window: LineWindow, params: ReadParams, filePath: string) {
  const metadata = {
    file_path: filePath,
    offset: params.offset,
    lines_returned: window.lines.length,
    has_more: window.hasMore,
    ...(window.totalLines === undefined ? {} : { total_lines: window.totalLines }),
    lines_cut: window.shortened,
  };
  if (window.totalLines === 0) return succeed(`File is empty: ${filePath}`, metadata);
  if (window.lines.length === 0) {
    return fail(`Offset ${params.offset} is past the end of ${filePath}, which has ${counted(window.totalLines ?? 0, 'line')}`, metadata);
  }
  const next = params.offset + window.lines.length;
  const size = window.fullAtSize ? `, and at most ${READ_MAX_WINDOW_CHARS} characters are returned at once` : '';
  const more = window.hasMore
    ? `\n\n(Showing lines ${params.offset + 1}-${next}; the file continues${size}. Call read_file with offset=${next} to read more.)`
    : '';
  return succeed(numbered(window.lines, params.offset) + more, metadata);
}

/** read_file: numbered lines of one text file, `cat -n` style, a window at a time. */
export const readFileTool: Tool<typeof parameters> = {
  name: 'read_file',
  description:
    'Read a text file and get its lines numbered like `cat -n`. file_path must be absolute. Reads up to 2000 lines from offset (0-based); ' +
    'call again with a larger offset for the rest of a long file. Lines over 2000 characters are cut; binary files are refused.',
  parameters,
  readOnly: true,
  startArgs: (params) => ({ file_path: params.file_path, offset: params.offset, limit: params.limit }),
  async execute(params, context) {
    try {
      const real = await regularFile(params.file_path, context);
      const file = await openCheckedForReading(real).catch((error: unknown) => {
        throw readError(error, params.file_path);
      });
      let window: LineWindow;
      try {
        if (!(await file.stat()).isFile()) throw new ToolError(`Not a regular file: ${params.file_path}`);
        window = await readLineWindow(file, params.offset, params.limit, READ_MAX_LINE_CHARS, READ_MAX_WINDOW_CHARS, context.signal).catch((error: unknown) => {
          throw readError(error, params.file_path);
        });
      } finally {
        await file.close();
      }
      if (window.binary) return fail(`Cannot read binary file: ${params.file_path}`);
      return render(window, params, params.file_path);
    } catch (error) {
      return failureFor(error, context.signal);
    }
  },
};
