import { stat } from 'node:fs/promises';
import { z } from 'zod';
import { diffPreview } from './diff-preview.js';
import { openCheckedForReading } from './checked-open.js';
import { checkWriteSize, writablePath, writeErrorMessage, writeRealFile } from './file-writing.js';
import { readOpenRegularFile } from '../util/regular-file.js';
import { counted } from './text.js';
import { fail, succeed, type Tool, type ToolContext } from './tool.js';
import { errnoCode, failureFor, ToolError } from './tool-errors.js';

const parameters = z.object({
  file_path: z.string().min(1).describe('File to edit, absolute or relative to the working directory'),
  old_string: z.string().describe('Exact text to replace, including whitespace and indentation; with replace_all false it must occur exactly once'),
  new_string: z.string().describe('Text to put in its place'),
  replace_all: z.boolean().default(false).describe('Replace every occurrence instead of requiring exactly one (default false)'),
});

type EditParams = z.output<typeof parameters>;

/** The file's text, refused when it is missing, not a regular file, binary or not UTF-8. */
async function editableText(real: string, filePath: string, maxBytes: number): Promise<string> {
  const stats = await stat(real).catch((error: unknown) => {
    if (errnoCode(error) === 'ENOENT' || errnoCode(error) === 'ENOTDIR') throw new ToolError(`File not found: ${filePath}`);
    throw error;
  });
  if (stats.isDirectory()) throw new ToolError(`Path is a directory, not a file: ${filePath}`);
  if (!stats.isFile()) throw new ToolError(`Not a regular file: ${filePath}`);
  // Read whole into the service: a file the result could not be written back as (a sparse file of
  // gigabytes made in one `bash` call) is refused before it costs the service its memory.
  checkWriteSize(stats.size, maxBytes);
  const file = await openCheckedForReading(real);
  let bytes: Buffer | undefined;
  try {
    const opened = await file.stat();
    if (!opened.isFile()) throw new ToolError(`Not a regular file: ${filePath}`);
    checkWriteSize(opened.size, maxBytes);
    bytes = await readOpenRegularFile(file, maxBytes);
  } finally {
    await file.close();
  }
  if (bytes === undefined) throw new ToolError(`Cannot edit ${filePath}: it changed while it was read`);
  if (bytes.includes(0)) throw new ToolError(`Cannot edit binary file: ${filePath}`);
  const text = bytes.toString('utf8');
  // Rewriting text decoded with replacement characters would destroy the bytes that were not UTF-8.
  if (!Buffer.from(text, 'utf8').equals(bytes)) throw new ToolError(`Cannot edit ${filePath}: it is not valid UTF-8 text`);
  return text;
}

function occurrences(text: string, search: string): number {
  let count = 0;
  for (let at = text.indexOf(search); at !== -1; at = text.indexOf(search, at + search.length)) count++;
  return count;
}

/**
 * The strings to use on `text`: as given, or with `\n` written `\r\n` when only that form occurs
 * (the agent reads files without their carriage returns).
 */
function matchLineEndings(text: string, params: EditParams): { search: string; replacement: string } {
  const given = { search: params.old_string, replacement: params.new_string };
  if (text.includes(params.old_string) || !text.includes('\r\n') || !params.old_string.includes('\n') || params.old_string.includes('\r')) return given;
  const crlf = (s: string): string => s.replace(/\r?\n/g, '\r\n');
  return text.includes(crlf(params.old_string)) ? { search: crlf(params.old_string), replacement: crlf(params.new_string) } : given;
}

function replaceOnce(text: string, search: string, replacement: string): string {
  const at = text.indexOf(search);
  return text.slice(0, at) + replacement + text.slice(at + search.length);
}

async function edit(params: EditParams, context: ToolContext) {
  const real = writablePath(params.file_path, context);
  if (params.old_string === '') return fail('old_string must not be empty (use write_file to create a file)');
  if (params.old_string === params.new_string) return fail('old_string and new_string are identical: nothing to change');
  const before = await editableText(real, params.file_path, context.settings.maxWriteBytes);
  const { search, replacement } = matchLineEndings(before, params);
  const count = occurrences(before, search);
  if (count === 0) {
    return fail(`old_string not found in ${params.file_path}. It must match the file exactly, including whitespace and indentation.`);
  }
  if (count > 1 && !params.replace_all) {
    return fail(
      `old_string occurs ${count} times in ${params.file_path}; include more surrounding text to make it unique, or set replace_all to true.`,
    );
  }
  const after = params.replace_all ? before.split(search).join(replacement) : replaceOnce(before, search, replacement);
  checkWriteSize(Buffer.byteLength(after, 'utf8'), context.settings.maxWriteBytes);
  await writeRealFile(real, after, context);
  const diff = diffPreview(real, before, after);
  return succeed(`Edited ${real}: replaced ${counted(count, 'occurrence')}.\n\n${diff}`, { file_path: real, replacements: count, diff });
}

/** edit_file: exact-match replacement with a diff preview. */
export const editFileTool: Tool<typeof parameters> = {
  name: 'edit_file',
  description:
    'Replace exact text in a file. old_string must match the file exactly (whitespace included) and, unless replace_all is true, ' +
    'occur exactly once; include surrounding lines to make it unique. Returns a diff of the change.',
  parameters,
  readOnly: false,
  modifiesFiles: true,
  startArgs: (params) => ({ file_path: params.file_path, replace_all: params.replace_all }),
  async execute(params, context) {
    try {
      return await edit(params, context);
    } catch (error) {
      if (errnoCode(error) !== undefined && !context.signal.aborted) return fail(writeErrorMessage(error, params.file_path));
      return failureFor(error, context.signal);
    }
  },
};
