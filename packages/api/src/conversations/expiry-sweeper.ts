import type { ConversationService } from './service.js';

/**
 * Periodically deletes expired conversations. Each sweep is awaited before the next is
 * scheduled, and stop() waits for a sweep in progress, so shutdown never races the database.
 */
export class ExpirySweeper {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private stopped = false;

  constructor(
    private readonly service: ConversationService,
    private readonly intervalMs: number,
    private readonly onError: (error: unknown) => void,
    private readonly onSwept: (count: number) => void = () => undefined,
  ) {}

  start(): void {
    if (this.service.expiryCutoff() === null) return;
    this.schedule();
  }

  async sweepOnce(): Promise<number> {
    return this.service.deleteExpired();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.running;
  }

  private schedule(): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.running = this.sweepOnce().then(this.onSwept, this.onError).finally(() => this.schedule());
    }, this.intervalMs);
    this.timer.unref();
  }
}
