import { createWorkerPool, siblingModule, type WorkerPool } from '../util/worker-pool.js';
import type { CheckpointOutcome, CheckpointTask } from './wal-checkpoint-worker.js';

/** How long after a commit the log is checkpointed: the commits of that time share one checkpoint. */
export const CHECKPOINT_DELAY_MS = 250;

/**
 * The service's own connection checkpoints only once the log holds this many pages (16,000 of
 * 4 KiB: 64 MiB). The worker's checkpoints keep it well under that, except under writes so steady
 * that no checkpoint finds the log idle: then the log cannot start over from its beginning (SQLite
 * restarts it only once every page in it is in the database file), and this checkpoint, which
 * runs with the writer, is what makes it start over.
 */
export const OWN_CHECKPOINT_PAGES = 16_000;

/**
 * One thread for the checkpoints of every database the process opens: a checkpoint is mostly
 * waiting for the disk, and they are a few a second at most. Its thread stops when idle.
 */
let pool: WorkerPool<CheckpointTask, CheckpointOutcome> | undefined;
const never = new AbortController().signal;

/**
 * Checkpoints a SQLite database's write-ahead log on a worker thread (wal-checkpoint-worker.ts), a
 * moment after commits, instead of on the event loop at the commit that fills the log.
 */
export class WalCheckpoints {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  /** A commit came while a checkpoint ran: another is due after it. */
  private again = false;
  private closed = false;

  /** `failed` is told once, at the first checkpoint that fails: the checkpoints stop here. */
  constructor(
    private readonly path: string,
    private readonly failed: () => void,
  ) {}

  /** Called after each commit. */
  committed(): void {
    if (this.closed) return;
    if (this.running) {
      this.again = true;
      return;
    }
    if (this.timer) return;
    this.timer = setTimeout(() => this.start(), CHECKPOINT_DELAY_MS);
    // Pending checkpoints never keep the process alive: closing the database checkpoints anyway.
    this.timer.unref();
  }

  private start(): void {
    this.timer = undefined;
    this.again = false;
    pool ??= createWorkerPool(siblingModule('wal-checkpoint-worker', import.meta.url), { maxThreads: 1 });
    this.running = pool
      .run({ path: this.path }, never)
      // A checkpoint that fails leaves its pages in the log, where a later one finds them: nothing
      // is lost, and the caller hands checkpoints back to its own connection.
      .then(
        () => undefined,
        () => {
          this.closed = true;
          this.failed();
        },
      )
      .finally(() => {
        this.running = undefined;
        if (this.again) this.committed();
      });
  }

  /** Stops checkpointing; resolves once a checkpoint under way is over, so the database may close. */
  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.timer);
    this.timer = undefined;
    await this.running;
  }
}
