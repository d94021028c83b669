import { createWorkerPool, siblingModule, type WorkerPool } from '../util/worker-pool.js';
import type { ContentSource } from './content-worker.js';
import { LARGE_READS_AT_ONCE } from './large-content.js';
import type { RunTextRef, RunTextTask } from './run-text-worker.js';

/** Where a run's large text comes from: its UTF-8 bytes, or undefined when it is gone. */
export type RunTextLoader = (text: RunTextRef) => Promise<Buffer | undefined>;

/** Loads a run's large texts, and ends whatever it keeps open for that. */
export interface RunTextReader {
  load: RunTextLoader;
  close(): Promise<void>;
}

/**
 * Loads runs' large texts on worker threads, each with its own connection to `source`. As many
 * threads as large reads may run at once (large-content.ts's turn): more would only wait.
 */
export function workerRunTextReader(source: ContentSource): RunTextReader {
  const pool: WorkerPool<RunTextTask, ArrayBuffer | null> = createWorkerPool(siblingModule('run-text-worker', import.meta.url), { maxThreads: LARGE_READS_AT_ONCE });
  const never = new AbortController().signal;
  return {
    load: async (text) => {
      const bytes = await pool.run({ source, text }, never);
      return bytes === null ? undefined : Buffer.from(bytes);
    },
    close: () => pool.close(),
  };
}
