/**
 * Polls `probe` until `ok` holds and returns that value; fails naming `what` and the last value
 * after 20 s (for state that changes in the background: a run ending, an approval appearing).
 */
export async function until<T>(probe: () => Promise<T>, ok: (value: T) => boolean, what: string): Promise<T> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const value = await probe();
    if (ok(value)) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}: ${JSON.stringify(value)}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
