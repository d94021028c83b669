/** A level-triggered wake-up: a notify before next() is waited for is not lost. */
export class Wake {
  private pending = false;
  private resolve: (() => void) | undefined;

  readonly notify = (): void => {
    if (this.resolve) {
      const resolve = this.resolve;
      this.resolve = undefined;
      resolve();
    } else {
      this.pending = true;
    }
  };

  next(): Promise<void> {
    if (this.pending) {
      this.pending = false;
      return Promise.resolve();
    }
    return new Promise((resolve) => (this.resolve = resolve));
  }
}
