import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { describe, expect, it } from 'vitest';
import { withDeadline } from '../../src/util/deadline.js';

// Garbage collection on demand, to do what a busy tool's allocations do to a deadline held weakly.
setFlagsFromString('--expose-gc');
const collectGarbage = runInNewContext('gc') as () => void;

/** Whether `signal` aborts within `ms` while garbage is collected every few milliseconds. */
async function abortsUnderCollection(signal: AbortSignal, ms: number): Promise<boolean> {
  for (const started = Date.now(); !signal.aborted && Date.now() - started < ms; ) {
    collectGarbage();
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  return signal.aborted;
}

describe('a deadline on a parent signal', () => {
  it('comes, with a TimeoutError, however often garbage is collected meanwhile', async () => {
    const deadline = withDeadline(new AbortController().signal, 100);
    expect(await abortsUnderCollection(deadline.signal, 5_000)).toBe(true);
    expect(deadline.signal.reason).toMatchObject({ name: 'TimeoutError' });
  });

  it("aborts with the parent's reason when the parent aborts first, and not later once disposed", async () => {
    const parent = new AbortController();
    const first = withDeadline(parent.signal, 60_000);
    parent.abort(new Error('cancelled'));
    expect(first.signal.reason).toEqual(new Error('cancelled'));
    const disposed = withDeadline(new AbortController().signal, 20);
    disposed.dispose();
    await new Promise((resolve) => setTimeout(resolve, 60));
    expect(disposed.signal.aborted).toBe(false);
  });
});
