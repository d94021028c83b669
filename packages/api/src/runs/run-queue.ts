export interface QueueLimits {
  /** Runs executing at once in this process. */
  maxConcurrent: number;
  /** Runs executing at once for one user in this process, unless admit is given the user's own limit. */
  maxPerUser: number;
}

/** A place to execute; give it back exactly once when the run ends. */
export interface RunSlot {
  release(): void;
}

export interface Admission {
  /** Whether the run has to wait for a place. */
  queued: boolean;
  /**
   * The same user's queued runs ahead of this one when it asked (running ones are not counted,
   * other users' are not told of); 0 when it starts at once.
   */
  ahead: number;
  /** Resolves when the run may execute; rejects with the signal's reason when it is cancelled first. */
  slot: Promise<RunSlot>;
}

class CancelledWhileQueued extends Error {
  constructor() {
    super('Run cancelled');
    this.name = 'CancelledWhileQueued';
  }
}

interface Waiter {
  userId: string;
  /** The user's limit of executing runs; 0: none but the process's. */
  perUser: number;
  admit(slot: RunSlot): void;
}

/**
 * Admits runs to execute under a process-wide and a per-user limit. Waiting runs are served first
 * in, first out among those whose user is under the limit, so one user's backlog never holds up
 * another user's run.
 */
export class RunQueue {
  private running = 0;
  private readonly perUser = new Map<string, number>();
  private readonly waiting: Waiter[] = [];

  constructor(private readonly limits: QueueLimits) {}

  get queued(): number {
    return this.waiting.length;
  }

  get active(): number {
    return this.running;
  }

  /** `perUser`: the user's own limit of executing runs (their quota); 0 means none but the process's. */
  admit(userId: string, signal?: AbortSignal, perUser = this.limits.maxPerUser): Admission {
    if (signal?.aborted) return { queued: false, ahead: 0, slot: Promise.reject(signal.reason ?? new CancelledWhileQueued()) };
    if (this.waiting.length === 0 && this.fits(userId, perUser)) return { queued: false, ahead: 0, slot: Promise.resolve(this.take(userId)) };
    const ahead = this.waiting.filter((waiter) => waiter.userId === userId).length;
    const slot = new Promise<RunSlot>((resolve, reject) => {
      const waiter: Waiter = { userId, perUser, admit: resolve };
      this.waiting.push(waiter);
      signal?.addEventListener(
        'abort',
        () => {
          const index = this.waiting.indexOf(waiter);
          if (index < 0) return;
          this.waiting.splice(index, 1);
          reject(signal.reason ?? new CancelledWhileQueued());
          this.dispatch();
        },
        { once: true },
      );
    });
    // The earliest waiter may fit already (another user's limit was the one reached).
    this.dispatch();
    return { queued: true, ahead, slot };
  }

  /** Whether a run of `userId` asking now would wait. */
  wouldWait(userId: string, perUser = this.limits.maxPerUser): boolean {
    return this.waiting.length > 0 || !this.fits(userId, perUser);
  }

  private fits(userId: string, perUser: number): boolean {
    return this.running < this.limits.maxConcurrent && (perUser === 0 || (this.perUser.get(userId) ?? 0) < perUser);
  }

  private take(userId: string): RunSlot {
    this.running += 1;
    this.perUser.set(userId, (this.perUser.get(userId) ?? 0) + 1);
    let released = false;
    return {
      release: () => {
        if (released) return;
        released = true;
        this.running -= 1;
        const left = (this.perUser.get(userId) ?? 1) - 1;
        if (left === 0) this.perUser.delete(userId);
        else this.perUser.set(userId, left);
        this.dispatch();
      },
    };
  }

  private dispatch(): void {
    for (let i = 0; i < this.waiting.length && this.running < this.limits.maxConcurrent; ) {
      const waiter = this.waiting[i] as Waiter;
      if (!this.fits(waiter.userId, waiter.perUser)) {
        i += 1;
        continue;
      }
      this.waiting.splice(i, 1);
      waiter.admit(this.take(waiter.userId));
    }
  }
}
