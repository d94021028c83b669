import type { RunService } from './runs/run-service.js';

export interface ShutdownSteps {
  runs: Pick<RunService, 'drain' | 'settle' | 'close' | 'active'>;
  /** Stops listening and finishes the requests in flight (Fastify's close). */
  closeServer(): Promise<void>;
  /** SHUTDOWN_GRACE_SECONDS, in milliseconds. */
  graceMs: number;
  log: { info(object: object, message: string): void };
}

/**
 * The order of a graceful stop. The server keeps answering through the grace period, so clients
 * can still read runs and follow their events; only new runs are refused (503). Runs still going
 * when the grace ends are interrupted and their final events stored before the server closes, so
 * every open event stream ends with that event instead of being cut.
 */
export async function shutDown({ runs, closeServer, graceMs, log }: ShutdownSteps): Promise<void> {
  runs.drain();
  if (runs.active > 0) {
    log.info({ runs: runs.active, grace_seconds: graceMs / 1000 }, 'refusing new runs; waiting for running ones to finish');
    await runs.settle(graceMs);
    if (runs.active > 0) log.info({ runs: runs.active }, 'grace period over: interrupting the runs still going');
  }
  await runs.close();
  await closeServer();
}
