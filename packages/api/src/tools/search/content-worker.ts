import { readFileSync } from 'node:fs';
import type { FileMatches, LineRecord } from './backend.js';
import { compileSearchRegex } from './patterns.js';

/**
 * The JavaScript backend's content matching, run on a worker thread: the pattern is the agent's,
 * and a backtracking regular expression such as `(a+)+$` can run for ever on one line. On a worker
 * the search's deadline can end it (see util/worker-pool.ts).
 */
export interface ContentTask {
  /** Absolute paths of the files to search. */
  paths: string[];
  pattern: string;
  caseSensitive: boolean;
  contextLines: number;
}

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

/** Files are read synchronously: this thread has nothing else to do, and small files read faster so. */
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

/** The matching lines (with context) of each text file in `task.paths` that has any. */
export default function searchFiles(task: ContentTask): FileMatches[] {
  const regex = compileSearchRegex(task.pattern, task.caseSensitive);
  return task.paths.flatMap((path) => searchFile(path, regex, task.contextLines) ?? []);
}
