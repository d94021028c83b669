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

/** The first 8 characters of an id: what the tables show, and enough for every command that takes one. */
export const shortId = (id: string): string => id.slice(0, 8);
