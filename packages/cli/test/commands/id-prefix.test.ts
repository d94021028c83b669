import { describe, expect, it } from 'vitest';
import { CliError, EXIT_ERROR, EXIT_USAGE } from '../../src/errors.js';
import { pagesOf, resolveId, RUN_IDS } from '../../src/commands/id-prefix.js';

const A = '6698088f-1111-4000-8000-000000000001';
const B = '6698088f-2222-4000-8000-000000000002';
const C = '7a1b2c3d-3333-4000-8000-000000000003';

/** The ids as a list route would page them, counting the pages asked for. */
function listed(ids: string[], size: number): { pages: () => AsyncGenerator<string[]>; asked: () => number } {
  let asked = 0;
  const pages = () =>
    pagesOf(size, async (offset) => {
      asked += 1;
      return { ids: ids.slice(offset, offset + size), total: ids.length };
    });
  return { pages, asked: () => asked };
}

async function failure(work: Promise<unknown>): Promise<CliError> {
  const error = await work.then(
    () => undefined,
    (reason: unknown) => reason,
  );
  if (!(error instanceof CliError)) throw new Error(`expected a CliError, got ${String(error)}`);
  return error;
}

describe('resolveId', () => {
  it('finds the one id a prefix starts, on a later page and in any letter case', async () => {
    const list = listed([A, C], 1);
    expect(await resolveId('7A1B2C3D', RUN_IDS, list.pages)).toBe(C);
    expect(list.asked()).toBe(2);
  });

  it('passes a whole id on without listing anything', async () => {
    const list = listed([], 100);
    expect(await resolveId(A.toUpperCase(), RUN_IDS, list.pages)).toBe(A);
    expect(list.asked()).toBe(0);
  });

  it('names every id an ambiguous prefix starts', async () => {
    const error = await failure(resolveId('6698088f', RUN_IDS, listed([A, B, C], 100).pages));
    expect(error.message).toBe(`6698088f starts 2 runs: ${A}, ${B}`);
    expect(error.hint).toBe('type more of the id to pick one');
    expect(error.exitCode).toBe(EXIT_ERROR);
    expect(await resolveId('6698088f-2', RUN_IDS, listed([A, B, C], 100).pages)).toBe(B);
  });

  it('says so for a prefix that starts no id, or one too short to use', async () => {
    const unknown = await failure(resolveId('deadbeef', RUN_IDS, listed([A, B], 100).pages));
    expect([unknown.message, unknown.hint]).toEqual(['No run of yours has an id starting with deadbeef', '`mada runs` lists them']);
    const short = await failure(resolveId('6698088', RUN_IDS, listed([A], 100).pages));
    expect(short.message).toBe('6698088 is too short for a run id');
    expect(short.exitCode).toBe(EXIT_USAGE);
  });

  it('does not ask the service about a word no UUID starts with', async () => {
    const list = listed([A], 100);
    const error = await failure(resolveId('../admin', RUN_IDS, list.pages));
    expect(error.message).toBe('No run of yours has an id starting with ../admin');
    expect(list.asked()).toBe(0);
  });
});
