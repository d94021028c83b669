import { TooManyRequestsError } from '../errors.js';

export const MAX_AUTH_FAILURES_PER_MINUTE = 30;
const WINDOW_MS = 60_000;

interface Window {
  failures: number;
  endsAt: number;
}

/**
 * Failed authentication attempts per client address, in one-minute windows: past the limit the
 * address gets 429 until its window ends, whatever key it sends, so keys cannot be guessed at
 * the speed of the network.
 */
export class AuthFailureLimiter {
  private readonly windows = new Map<string, Window>();

  constructor(
    private readonly maxFailures = MAX_AUTH_FAILURES_PER_MINUTE,
    private readonly now: () => number = Date.now,
    /** Told once per window, when a client reaches the limit (the audit log's `auth.locked`). */
    private readonly onLocked: (client: string) => void = () => undefined,
  ) {}

  /** Whether any client failed within about the last minute (ended windows are dropped lazily). */
  get anyFailures(): boolean {
    return this.windows.size > 0;
  }

  /** Throws TooManyRequestsError while `address` is over the limit. */
  check(address: string): void {
    const window = this.current(address);
    if (window && window.failures >= this.maxFailures) {
      const seconds = Math.max(1, Math.ceil((window.endsAt - this.now()) / 1000));
      throw new TooManyRequestsError(`Too many failed authentication attempts. Retry in ${seconds} seconds.`, seconds);
    }
  }

  recordFailure(address: string): void {
    this.forgetEnded();
    const window = this.current(address) ?? { failures: 0, endsAt: this.now() + WINDOW_MS };
    window.failures += 1;
    this.windows.set(address, window);
    if (window.failures === this.maxFailures) this.onLocked(address);
  }

  private current(address: string): Window | undefined {
    const window = this.windows.get(address);
    return window && window.endsAt > this.now() ? window : undefined;
  }

  /**
   * Keeps the map as small as the set of addresses that failed within the last minute. A window's
   * end is fixed when it is created and a Map iterates in creation order, so the ended windows are
   * the first ones: stopping at the first live one keeps a failure's cost constant. (Scanning them
   * all made a flood from many addresses, which 127.0.0.0/8 gives every local user, quadratic:
   * 40 000 failures held the event loop for 40 s.)
   */
  private forgetEnded(): void {
    const now = this.now();
    for (const [address, window] of this.windows) {
      if (window.endsAt > now) break;
      this.windows.delete(address);
    }
  }
}
