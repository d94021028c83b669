import { createWorkerPool, siblingModule, type WorkerPool } from '../util/worker-pool.js';
import type { CheckpointOutcome, CheckpointTask } from './wal-checkpoint-worker.js';

/**
 * Commits between two checkpoints. A run's commit writes three or four pages to the log, so this
 * is about SQLite's own 1,000 pages. Counted in commits rather than time: the first commit after
 * a checkpoint that emptied the log starts it over and syncs its header on the event loop, which
 * a checkpoint after every pause in the writes would cost the writes of a quiet service each time.
 */
export const CHECKPOINT_COMMITS = 256;

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
 * Checkpoints a SQLite database's write-ahead log on a worker thread (wal-checkpoint-worker.ts)
 * every CHECKPOINT_COMMITS commits, instead of on the event loop at the commit that fills the log.
 */
export class WalCheckpoints {
  private commits = 0;
  private running: Promise<void> | undefined;
  private closed = false;

  /** `failed` is told once, at the first checkpoint that fails: the checkpoints stop here. */
  constructor(
    private readonly path: string,
    private readonly failed: () => void,
  ) {}

  /** Called after each commit. */
  committed(): void {
    this.commits += 1;
    if (this.closed || this.running || this.commits < CHECKPOINT_COMMITS) return;
    this.commits = 0;
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
      .finally(() => (this.running = undefined));
  }

  /** Stops checkpointing; resolves once a checkpoint under way is over, so the database may close. */
  async close(): Promise<void> {
    this.closed = true;
    await this.running;
  }
}
