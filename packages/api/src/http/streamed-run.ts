import { Readable } from 'node:stream';
import { setImmediate as nextTurn } from 'node:timers/promises';
import type { RunResponse } from '@mada/protocol';
import type { LargeText, RunRecord, RunTextColumn, RunView } from '../db/run-repository.js';
import { toRunResponse } from '../runs/run-response.js';

/*
 * RunResponse and RunListResponse bodies whose runs hold large texts (a long model answer, an old
 * prompt): the same bytes Fastify's serializer gives for their schemas (fields in schema order),
 * but each large text read off the event loop and escaped a slice at a time as the client drains
 * what was sent, other requests getting the event loop between slices (as streamed-detail.ts does
 * for messages). Runs without large texts go through the serializer as before.
 */

/** Where a text left out of a view comes from. */
export type RunTexts = (runId: string, column: RunTextColumn) => AsyncIterable<string>;

const TEXT_COLUMNS: readonly RunTextColumn[] = ['prompt', 'response', 'error'];

const isLarge = (value: string | LargeText | null): value is LargeText => typeof value === 'object' && value !== null;

/** Whether a view left any of its texts out. */
export const hasLargeText = (run: RunView): boolean => TEXT_COLUMNS.some((column) => isLarge(run[column]));

/** A view whose texts are all inline, as the record toRunResponse takes. */
function inlineRecord(run: RunView): RunRecord {
  const text = (value: string | LargeText | null): string | null => (isLarge(value) ? '' : value);
  return { ...run, prompt: text(run.prompt) ?? '', response: text(run.response), error: text(run.error) };
}

/** RunResponse of a view with no large text. */
export const inlineRunResponse = (run: RunView): RunResponse => toRunResponse(inlineRecord(run));

/** RunResponse of any view, its large texts read by `texts`. */
export function streamedRun(run: RunView, texts: RunTexts): Readable {
  return Readable.from(runChunks(run, texts), { objectMode: false });
}

/** RunListResponse: `{"runs": [...], "total": <n>}`. */
export function streamedRunList(runs: readonly RunView[], total: number, texts: RunTexts): Readable {
  return Readable.from(listChunks(runs, total, texts), { objectMode: false });
}

async function* listChunks(runs: readonly RunView[], total: number, texts: RunTexts): AsyncGenerator<string> {
  yield '{"runs":[';
  for (const [i, run] of runs.entries()) {
    if (i > 0) yield ',';
    yield* runChunks(run, texts);
  }
  yield `],"total":${JSON.stringify(total)}}`;
}

/** One RunResponse, field by field: JSON.stringify of each gives what it gives of the whole. */
async function* runChunks(run: RunView, texts: RunTexts): AsyncGenerator<string> {
  let pending = '{';
  for (const [key, value] of Object.entries(inlineRunResponse(run))) {
    const column = TEXT_COLUMNS.find((name) => name === key);
    pending += `${pending === '{' ? '' : ','}${JSON.stringify(key)}:`;
    if (column === undefined || !isLarge(run[column])) {
      pending += JSON.stringify(value);
      continue;
    }
    yield `${pending}"`;
    pending = '';
    // Slices end on whole characters, and JSON escapes each character on its own: the pieces join
    // into the escape of the whole text.
    for await (const slice of texts(run.id, column)) {
      yield JSON.stringify(slice).slice(1, -1);
      await nextTurn();
    }
    pending = '"';
  }
  yield `${pending}}`;
}
