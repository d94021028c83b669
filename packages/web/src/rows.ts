import type { RunEvent } from '@mada/protocol';

/**
 * One row of a run's event list: a single event, or the text frames of one streamed answer
 * joined. `firstId`..`lastId` are the stored event ids it shows (equal for a single event).
 */
export interface EventRow {
  firstId: number;
  lastId: number;
  event: RunEvent;
}

/**
 * Adds the event with id `id` to `rows`: a text frame right after a text frame of the same kind
 * (the same answer still streaming: any other event, a tool call say, ends it) joins that row,
 * anything else is a row of its own. The service stores an answer as many text frames, and a row
 * per frame made a long answer thousands of rows of a few words. Replay and live events both come
 * through here, so a reload shows the rows it showed before. The joined row is a new object (the
 * list re-renders it); earlier rows are left as they were.
 */
export function appendEvent(rows: EventRow[], id: number, event: RunEvent): void {
  const last = rows.at(-1);
  const joined = last === undefined ? undefined : joinText(last.event, event);
  if (last !== undefined && joined !== undefined) rows[rows.length - 1] = { firstId: last.firstId, lastId: id, event: joined };
  else rows.push({ firstId: id, lastId: id, event });
}

function joinText(first: RunEvent, second: RunEvent): RunEvent | undefined {
  if (first.event === 'chunk' && second.event === 'chunk') return { event: 'chunk', data: first.data + second.data };
  if (first.event === 'response' && second.event === 'response') return { event: 'response', text: first.text + second.text };
  return undefined;
}
