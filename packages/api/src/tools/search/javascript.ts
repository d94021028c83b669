import { setMaxListeners } from 'node:events';
import { stat } from 'node:fs/promises';
import { createWorkerPool, siblingModule, type WorkerPool } from '../../util/worker-pool.js';
import { relativeToRoot, type ContentSearchRequest, type FileListRequest, type FileMatches, type SearchBackend } from './backend.js';
import type { ContentTask } from './content-worker.js';
import { compileSearchRegex } from './patterns.js';
import { walkFiles } from './walk.js';

/**
 * Files per worker task: large enough that handing a batch over costs little next to reading it,
 * small enough that the threads share the work and results arrive while the walk goes on.
 */
const BATCH_FILES = 256;

export type ContentPool = WorkerPool<ContentTask, FileMatches[]>;

async function listMatchingFiles({ root, glob, signal }: FileListRequest, onFile: (path: string) => void): Promise<void> {
  await walkFiles(root, signal, (path) => {
    if (!glob || glob.matches(relativeToRoot(root, path))) onFile(path);
  });
}

/**
 * Walks on this thread (asynchronously) and matches on the pool's threads, batch by batch. The
 * request's signal ends both: a pattern that backtracks for ever stops at the tool's deadline.
 */
async function searchWithPool(pool: ContentPool, request: ContentSearchRequest, onFile: (matches: FileMatches) => void): Promise<void> {
  compileSearchRegex(request.pattern, request.caseSensitive); // a bad pattern fails here, before any work
  const stop = new AbortController();
  const signal = AbortSignal.any([request.signal, stop.signal]);
  // Every queued batch listens for the abort: that is expected here, not a leak.
  setMaxListeners(0, signal);
  const task = (paths: string[]): ContentTask => ({ paths, pattern: request.pattern, caseSensitive: request.caseSensitive, contextLines: request.contextLines });
  let failure: unknown;
  const running: Promise<void>[] = [];
  // Each batch's promise settles without rejecting, so none is left unhandled while the walk goes on.
  const dispatch = (paths: string[]): void => {
    const settled = pool
      .run(task(paths), signal)
      .then((found) => found.forEach(onFile))
      .catch((error: unknown) => {
        failure ??= error;
        stop.abort(error);
      });
    running.push(settled);
  };
  try {
    if ((await stat(request.root)).isFile()) {
      dispatch([request.root]);
    } else {
      let batch: string[] = [];
      await listMatchingFiles({ ...request, signal }, (path) => {
        batch.push(path);
        if (batch.length < BATCH_FILES) return;
        dispatch(batch);
        batch = [];
      });
      if (batch.length > 0) dispatch(batch);
    }
  } catch (error) {
    failure ??= error;
    stop.abort(error);
  }
  await Promise.all(running);
  if (failure !== undefined) throw failure;
}

/** The fallback when `rg` is not installed: the same files and lines, found in JavaScript. */
export function createJavascriptBackend(pool: ContentPool): SearchBackend {
  return {
    name: 'javascript',
    listFiles: listMatchingFiles,
    searchContent: (request, onFile) => searchWithPool(pool, request, onFile),
  };
}

/** The service's one content pool: no thread starts until the fallback first searches. */
export const contentPool: ContentPool = createWorkerPool(siblingModule('content-worker', import.meta.url));

export const javascriptBackend = createJavascriptBackend(contentPool);
