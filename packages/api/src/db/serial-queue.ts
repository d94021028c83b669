/**
 * Runs asynchronous jobs one after another. A SQLite connection is one session: a transaction
 * left open across an `await` would otherwise take in the statements of other requests.
 */
export class SerialQueue {
  private tail: Promise<unknown> = Promise.resolve();

  run<T>(job: () => Promise<T>): Promise<T> {
    const result = this.tail.then(job);
    // The next job waits for this one to settle, whether it succeeded or not.
    this.tail = result.catch(() => undefined);
    return result;
  }
}
