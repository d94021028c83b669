import { createWorkerPool, siblingModule, type WorkerPool } from '../util/worker-pool.js';
import type { ContentSource, LargeTextRef, LargeTextTask } from './large-text-worker.js';

/**
 * Bytes of a large content handed over at a time: under V8's large-object size (128 KiB), for
 * most text even once escaped as JSON, so each slice's strings die young and cheaply. At 256 KiB
 * every slice went to the large-object space, kept until a full collection, and six readers of a
 * 60 MiB history left hundreds of MiB of such garbage.
 */
export const CONTENT_SLICE_BYTES = 48 * 1024;

/**
 * Large contents loaded at once, in the whole process. Each is held until its reader has sent it
 * on, so this bounds the memory large rows take however many clients read them: the others wait
 * their turn. A client that reads slowly keeps its turn longer; small messages never wait.
 */
export const LARGE_READS_AT_ONCE = 2;

/** Where the whole content of one stored message comes from: its UTF-8 bytes, or undefined when it is gone. */
export type ContentLoader = (messageId: string) => Promise<Buffer | undefined>;

/** Where any large stored text comes from (large-text-worker.ts): its UTF-8 bytes, or undefined when it is gone. */
export interface LargeTextReader {
  load(text: LargeTextRef): Promise<Buffer | undefined>;
  close(): Promise<void>;
}

/**
 * Loads large texts on worker threads, each with its own connection to `source`: as many threads
 * as large reads may be held at once (the turns below); more would only wait.
 */
export function workerLargeTextReader(source: ContentSource): LargeTextReader {
  const pool: WorkerPool<LargeTextTask, ArrayBuffer | null> = createWorkerPool(siblingModule('large-text-worker', import.meta.url), { maxThreads: LARGE_READS_AT_ONCE });
  const never = new AbortController().signal;
  return {
    load: async (text) => {
      const bytes = await pool.run({ source, text }, never);
      return bytes === null ? undefined : Buffer.from(bytes);
    },
    close: () => pool.close(),
  };
}

/** A FIFO of turns: at most `size` holders at once. */
class Turns {
  private held = 0;
  private readonly waiting: (() => void)[] = [];

  constructor(private readonly size: number) {}

  async take(): Promise<void> {
    if (this.held < this.size) {
      this.held += 1;
      return;
    }
    // The turn passes straight from the one giving it back, so `held` stays as it is.
    await new Promise<void>((resolve) => this.waiting.push(resolve));
  }

  give(): void {
    const next = this.waiting.shift();
    if (next) next();
    else this.held -= 1;
  }
}

const turns = new Turns(LARGE_READS_AT_ONCE);

/**
 * A large message's content as text, a slice of about CONTENT_SLICE_BYTES at a time: the whole
 * row is loaded off the event loop, and each slice decoded only when its reader asks for it. The
 * process-wide turn is held until the last slice is taken or the reader stops.
 */
export function contentSlices(load: ContentLoader, messageId: string): AsyncGenerator<string> {
  return largeSlices(() => load(messageId));
}

/**
 * Any large stored text (a message's content, a run's response, an event's data) as text a slice
 * at a time, loaded by `load` under the same process-wide turn, so every kind of large read
 * together holds at most LARGE_READS_AT_ONCE rows in memory.
 */
export async function* largeSlices(load: () => Promise<Buffer | undefined>): AsyncGenerator<string> {
  await turns.take();
  try {
    const bytes = await load();
    if (bytes === undefined) return;
    for (let start = 0; start < bytes.length; ) {
      const end = sliceEnd(bytes, start);
      yield bytes.toString('utf8', start, end);
      start = end;
    }
  } finally {
    turns.give();
  }
}

/** Where a slice from `start` ends: about CONTENT_SLICE_BYTES on, never inside a character's UTF-8 sequence. */
function sliceEnd(bytes: Buffer, start: number): number {
  let end = Math.min(bytes.length, start + CONTENT_SLICE_BYTES);
  // A continuation byte (10xxxxxx) belongs to the character before it; a character has at most three.
  for (let back = 0; end < bytes.length && back < 3 && (bytes[end]! & 0xc0) === 0x80; back++) end -= 1;
  return end;
}
