import type { RunEvent } from '@mada/protocol';
import { describe, expect, it } from 'vitest';
import { appendEvent, type EventRow } from '../src/rows.js';

/** The rows the console's event list shows for these events, numbered from 1 as the service stores them. */
function rowsOf(events: RunEvent[]): EventRow[] {
  const rows: EventRow[] = [];
  events.forEach((event, index) => appendEvent(rows, index + 1, event));
  return rows;
}

describe("a run's event rows", () => {
  it("joins the text frames of one streamed answer, and only those, into one row", () => {
    const rows = rowsOf([
      { event: 'response', text: 'Looking ' },
      { event: 'response', text: 'first.' },
      { event: 'tool_start', tool: 'glob_files', args: { pattern: '*' } },
      { event: 'tool_done', tool: 'glob_files', result_summary: 'a.txt', outcome: 'ok' },
      { event: 'response', text: 'Found ' },
      { event: 'response', text: 'a.txt' },
      { event: 'response', text: '.' },
      { event: 'done', mode: 'default' },
    ]);
    expect(rows).toEqual([
      { firstId: 1, lastId: 2, event: { event: 'response', text: 'Looking first.' } },
      { firstId: 3, lastId: 3, event: { event: 'tool_start', tool: 'glob_files', args: { pattern: '*' } } },
      { firstId: 4, lastId: 4, event: { event: 'tool_done', tool: 'glob_files', result_summary: 'a.txt', outcome: 'ok' } },
      { firstId: 5, lastId: 7, event: { event: 'response', text: 'Found a.txt.' } },
      { firstId: 8, lastId: 8, event: { event: 'done', mode: 'default' } },
    ]);
  });

  it('keeps `chunk` and `response` frames apart, and a chunk after a thinking line in a row of its own', () => {
    const rows = rowsOf([
      { event: 'chunk', data: 'a' },
      { event: 'chunk', data: 'b' },
      { event: 'response', text: 'c' },
      { event: 'thinking', message: 'hmm' },
      { event: 'chunk', data: 'd' },
    ]);
    expect(rows.map((row) => [row.firstId, row.lastId, row.event.event])).toEqual([
      [1, 2, 'chunk'],
      [3, 3, 'response'],
      [4, 4, 'thinking'],
      [5, 5, 'chunk'],
    ]);
  });

  it('replaces the growing row with a new object and leaves the earlier rows as they were', () => {
    const rows = rowsOf([{ event: 'thinking', message: 'x' }, { event: 'chunk', data: 'a' }]);
    const [before, growing] = rows;
    appendEvent(rows, 3, { event: 'chunk', data: 'b' });
    expect(rows[0]).toBe(before);
    expect(rows[1]).not.toBe(growing);
    expect(rows[1]).toEqual({ firstId: 2, lastId: 3, event: { event: 'chunk', data: 'ab' } });
  });
});
