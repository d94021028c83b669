import { createRequire } from 'node:module';
import { availableParallelism } from 'node:os';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { ResourceLimits } from 'node:worker_threads';
import { Piscina } from 'piscina';

/**
 * Work that must not run on the event loop (matching a user-supplied backtracking regular
 * expression, for one) goes to a pool of worker threads. Aborting a task's signal terminates the
 * thread running it, so a task that never ends costs a thread until its deadline, never the
 * service. Threads are started on first use and kept warm between tasks.
 */
export interface WorkerPool<Task, Result> {
  /** Runs `task` on a worker; rejects with an AbortError as soon as `signal` aborts. */
  run(task: Task, signal: AbortSignal): Promise<Result>;
  /** Ends every thread (start-up again on the next `run`). */
  close(): Promise<void>;
}

export interface WorkerPoolOptions {
  /** Most threads at once (default: the machine's cores, at most 4). */
  maxThreads?: number;
  /** How long an idle thread is kept for the next task (default 60 s). */
  idleTimeoutMs?: number;
  /**
   * Each thread's heap limits: a task that needs more ends its thread (the task rejects with
   * ERR_WORKER_OUT_OF_MEMORY) instead of the whole process running out.
   */
  resourceLimits?: ResourceLimits;
}

/**
 * The worker module `name` (without extension) beside `base`: the compiled `.js` when the caller
 * runs compiled, the `.ts` source when it runs from source (tests, bench, development).
 */
export function siblingModule(name: string, base: string): URL {
  return new URL(`./${name}${base.endsWith('.ts') ? '.ts' : '.js'}`, base);
}

/** A TypeScript worker needs tsx's loader, which is there wherever the sources run. */
function loaderArgs(module: URL): string[] {
  if (!module.pathname.endsWith('.ts')) return [];
  return ['--import', pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href];
}

/** A pool running the default export of `module` (a function of one task). */
export function createWorkerPool<Task, Result>(module: URL, options: WorkerPoolOptions = {}): WorkerPool<Task, Result> {
  let piscina: Piscina | undefined;
  const pool = (): Piscina =>
    (piscina ??= new Piscina({
      filename: fileURLToPath(module),
      minThreads: 0,
      maxThreads: options.maxThreads ?? Math.min(4, availableParallelism()),
      idleTimeout: options.idleTimeoutMs ?? 60_000,
      execArgv: loaderArgs(module),
      ...(options.resourceLimits === undefined ? {} : { resourceLimits: options.resourceLimits }),
    }));
  return {
    run: (task, signal) => pool().run(task, { signal }) as Promise<Result>,
    async close() {
      const running = piscina;
      piscina = undefined;
      await running?.destroy();
    },
  };
}
