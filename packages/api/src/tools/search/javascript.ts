import { readFileSync } from 'node:fs';
import { stat } from 'node:fs/promises';
import { setImmediate as yieldToEventLoop } from 'node:timers/promises';
import { relativeToRoot, type ContentSearchRequest, type FileMatches, type LineRecord, type SearchBackend } from './backend.js';
import { compileSearchRegex } from './patterns.js';
import { walkFiles } from './walk.js';

/**
 * Files are read synchronously (small files cost a few microseconds that way, against several
 * thread-pool round trips each asynchronously), in batches between which other work can run.
 */
const READ_BATCH = 64;

/** Lines as ripgrep sees them with `--crlf`: split at `\n`, a `\r` before it is not content. */
function splitLines(text: string): string[] {
  const lines = text.split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  return lines.map((line) => (line.endsWith('\r') ? line.slice(0, -1) : line));
}

function withContext(lines: readonly string[], matching: readonly number[], contextLines: number): LineRecord[] {
  const matchSet = new Set(matching);
  const shown = new Set<number>();
  for (const index of matching) {
    const last = Math.min(lines.length - 1, index + contextLines);
    for (let i = Math.max(0, index - contextLines); i <= last; i++) shown.add(i);
  }
  return [...shown]
    .sort((a, b) => a - b)
    .map((index) => ({ line: index + 1, text: lines[index] as string, match: matchSet.has(index) }));
}

function searchFile(path: string, regex: RegExp, contextLines: number): FileMatches | undefined {
  let buffer: Buffer;
  try {
    buffer = readFileSync(path);
  } catch {
    return undefined; // vanished or unreadable since the walk: ripgrep skips it silently too
  }
  if (buffer.includes(0)) return undefined;
  const lines = splitLines(buffer.toString('utf8'));
  const matching: number[] = [];
  lines.forEach((line, index) => {
    if (regex.test(line)) matching.push(index);
  });
  return matching.length === 0 ? undefined : { path, lines: withContext(lines, matching, contextLines) };
}

async function candidateFiles(request: ContentSearchRequest): Promise<string[]> {
  if ((await stat(request.root)).isFile()) return [request.root];
  const files: string[] = [];
  await javascriptBackend.listFiles(request, (path) => files.push(path));
  return files;
}


/** The fallback when `rg` is not installed: the same files and lines, found in JavaScript. */
export const javascriptBackend: SearchBackend = {
  name: 'javascript',

  async listFiles({ root, glob, signal }, onFile) {
    await walkFiles(root, signal, (path) => {
      if (!glob || glob.matches(relativeToRoot(root, path))) onFile(path);
    });
  },

  async searchContent(request, onFile) {
    const regex = compileSearchRegex(request.pattern, request.caseSensitive);
    const files = await candidateFiles(request);
    for (let start = 0; start < files.length; start += READ_BATCH) {
      if (start > 0) await yieldToEventLoop();
      request.signal.throwIfAborted();
      for (const path of files.slice(start, start + READ_BATCH)) {
        const matches = searchFile(path, regex, request.contextLines);
        if (matches) onFile(matches);
      }
    }
  },
};
