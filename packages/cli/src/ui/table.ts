import { safeText } from './safe-text.js';
import type { Terminal } from './terminal.js';

/** The shortest a clipped last column gets, however narrow the terminal. */
const MIN_LAST = 12;

/**
 * Columns padded to their widest cell, the header in bold; `rightAligned` holds numeric columns.
 * With `fitLast`, the last column (a prompt, a title) is clipped so each line fits the terminal.
 */
export function printTable(table: string[][], terminal: Terminal, rightAligned: ReadonlySet<number> = new Set(), fitLast = false): void {
  // Cells quote the service (titles, prompts); cleaned first, so the padding counts what is shown.
  const cleaned = table.map((cells) => cells.map(safeText));
  const last = cleaned[0]!.length - 1;
  const before = cleaned[0]!.slice(0, last).reduce((sum, _, column) => sum + Math.max(...cleaned.map((cells) => cells[column]!.length)) + 2, 0);
  const room = Math.max(MIN_LAST, terminal.columns - before);
  const rows = cleaned.map((cells) => cells.map((cell, column) => (fitLast && column === last ? clip(cell, room) : cell)));
  const widths = rows[0]!.map((_, column) => Math.max(...rows.map((cells) => cells[column]!.length)));
  rows.forEach((cells, index) => {
    const line = cells
      .map((cell, column) => (rightAligned.has(column) ? cell.padStart(widths[column]!) : cell.padEnd(widths[column]!)))
      .join('  ')
      .trimEnd();
    terminal.print(index === 0 ? terminal.style('bold', line) : line);
  });
}

const pad2 = (n: number): string => String(n).padStart(2, '0');

/** Local time to the minute: enough to recognise a session or a run. */
export function when(iso: string): string {
  const date = new Date(iso);
  return `${date.getFullYear()}-${pad2(date.getMonth() + 1)}-${pad2(date.getDate())} ${pad2(date.getHours())}:${pad2(date.getMinutes())}`;
}

/** One line of at most `max` characters, an ellipsis marking a cut. */
export function clip(text: string, max: number): string {
  const line = safeText(text).replace(/\s+/g, ' ').trim();
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
}

/** The fewest characters of an id shown: the first group of a UUID (the commands' MIN_PREFIX). */
const SHORT_ID = 8;

const commonPrefix = (a: string, b: string): number => {
  let n = 0;
  while (n < a.length && n < b.length && a[n] === b[n]) n += 1;
  return n;
};

/**
 * Each of `ids` cut to its shortest prefix of at least 8 characters that no other of them starts
 * with, in the order given: what a list shows, so that any id it shows can be typed back as it is.
 * The longest prefix an id shares with any other is the one it shares with a neighbour in sorted
 * order, so sorting once makes this O(n log n).
 */
export function uniqueShortIds(ids: readonly string[]): string[] {
  const sorted = [...new Set(ids.map((id) => id.toLowerCase()))].sort();
  const lengths = new Map<string, number>();
  sorted.forEach((id, index) => {
    const shared = Math.max(index > 0 ? commonPrefix(id, sorted[index - 1]!) : 0, index + 1 < sorted.length ? commonPrefix(id, sorted[index + 1]!) : 0);
    lengths.set(id, Math.min(id.length, Math.max(SHORT_ID, shared + 1)));
  });
  return ids.map((id) => id.slice(0, lengths.get(id.toLowerCase())));
}

/** How long ago `iso` was, in one short word (`3m ago`, `5h ago`, `12d ago`): fits a narrow column. */
export function ago(iso: string, now: number): string {
  const minutes = Math.max(0, Math.floor((now - Date.parse(iso)) / 60_000));
  if (minutes < 1) return 'just now';
  if (minutes < 60) return `${minutes}m ago`;
  if (minutes < 48 * 60) return `${Math.floor(minutes / 60)}h ago`;
  return `${Math.floor(minutes / (24 * 60))}d ago`;
}

/** The local date alone: a key's creation or expiry. */
export function day(iso: string): string {
  return when(iso).slice(0, 10);
}
