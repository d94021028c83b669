import { setTimeout as sleep } from 'node:timers/promises';
import type { ApiClient } from '../api/client.js';
import { ApiError, ConnectionLostError, ReattachFailedError, RequestCancelledError, RequestTimeoutError, ServiceUnreachableError } from '../api/errors.js';
import type { RunFrame } from './sse-reader.js';

/** Waits before each reattach in a row without a new frame; past the last one, the client gives up. */
export const REATTACH_DELAYS_MS: readonly number[] = [250, 500, 1000, 2000, 4000, 8000];

export interface FollowRunOptions {
  /** The last event already seen (0: none, read from the first). */
  after?: number;
  signal?: AbortSignal | undefined;
  /** Told before each reattach, with the id it resumes after. */
  onReattach?: (lastId: number) => void;
  delaysMs?: readonly number[];
}

const isFinal = (frame: Record<string, unknown>): boolean => frame.event === 'done' || frame.event === 'error';

/** Failures a new connection may cure: the network, a proxy or a restarting service. */
function isTransient(error: unknown): boolean {
  if (error instanceof ApiError) return error.status === 502 || error.status === 503 || error.status === 504;
  return error instanceof ConnectionLostError || error instanceof ServiceUnreachableError || error instanceof RequestTimeoutError;
}

function reasonOf(error: unknown): string {
  if (error instanceof ConnectionLostError) return error.reason;
  if (error instanceof ServiceUnreachableError) return error.code;
  if (error instanceof Error) return error.message;
  return 'the stream closed before the run ended';
}

async function pause(ms: number, signal: AbortSignal | undefined): Promise<void> {
  try {
    await sleep(ms, undefined, signal ? { signal } : {});
  } catch {
    throw new RequestCancelledError();
  }
}

/**
 * A run's events from `after` to its final `done` or `error`, each exactly once. When the stream
 * breaks (or closes before the final frame), it reattaches with `Last-Event-ID` set to the last
 * id it yielded, waiting longer after each attempt that brings nothing new, and gives up with
 * ReattachFailedError after the last delay. Frames at or below the last id are dropped, so a
 * server that replays too much still shows nothing twice.
 */
export async function* followRun(client: ApiClient, runId: string, options: FollowRunOptions = {}): AsyncGenerator<RunFrame> {
  const delays = options.delaysMs ?? REATTACH_DELAYS_MS;
  let last = options.after ?? 0;
  let failures = 0;
  for (;;) {
    let failure: unknown;
    try {
      for await (const event of await client.runEvents(runId, last, options.signal)) {
        if (event.id !== undefined) {
          if (event.id <= last) continue;
          last = event.id;
        }
        failures = 0;
        yield event;
        if (isFinal(event.frame)) return;
      }
    } catch (error) {
      if (!isTransient(error)) throw error;
      failure = error;
    }
    const delay = delays[failures];
    if (delay === undefined) throw new ReattachFailedError(runId, reasonOf(failure));
    failures += 1;
    options.onReattach?.(last);
    await pause(delay, options.signal);
  }
}
