import { StringDecoder } from 'node:string_decoder';
import type { Readable } from 'node:stream';

export const MAX_OUTPUT_CHARS = 50_000;

export interface OutputMark {
  chunks: number;
  length: number;
  discarded: number;
}

/**
 * Keeps the first `limit` characters of everything the commands print and counts the rest without
 * storing it, so a command that prints gigabytes costs no memory. Past `floodLimit` discarded
 * characters it calls `onFlood` once (the runner then stops the commands).
 */
export class OutputCollector {
  private readonly chunks: string[] = [];
  private length = 0;
  private discarded = 0;
  private flooded = false;

  constructor(
    private readonly limit: number = MAX_OUTPUT_CHARS,
    private readonly floodLimit: number = 64 * 1024 * 1024,
    private readonly onFlood: () => void = () => {},
  ) {}

  add(text: string): void {
    if (text === '') return;
    const room = this.limit - this.length;
    if (room > 0) {
      let kept = text.length <= room ? text : text.slice(0, room);
      // Never end on half of a surrogate pair.
      if (kept.length < text.length && /[\uD800-\uDBFF]$/.test(kept)) kept = kept.slice(0, -1);
      this.chunks.push(kept);
      this.length += kept.length;
      this.discarded += text.length - kept.length;
    } else {
      this.discarded += text.length;
    }
    if (this.discarded > this.floodLimit && !this.flooded) {
      this.flooded = true;
      this.onFlood();
    }
  }

  /** Decodes a byte stream into the collector (UTF-8 characters split across chunks stay whole). */
  drain(stream: Readable): void {
    const decoder = new StringDecoder('utf8');
    stream.on('data', (chunk: Buffer) => this.add(decoder.write(chunk)));
    stream.on('end', () => this.add(decoder.end()));
    stream.on('error', () => {});
  }

  /** Where the output stands now, for rollback(). */
  mark(): OutputMark {
    return { chunks: this.chunks.length, length: this.length, discarded: this.discarded };
  }

  /**
   * Forgets what came after `mark`: the words of a sandbox that failed before its command started,
   * which is then run again. Only while nothing else writes to the collector.
   */
  rollback(mark: OutputMark): void {
    this.chunks.length = Math.min(this.chunks.length, mark.chunks);
    this.length = mark.length;
    this.discarded = mark.discarded;
  }

  get text(): string {
    return this.chunks.join('');
  }

  get truncated(): boolean {
    return this.discarded > 0;
  }

  get wasFlooded(): boolean {
    return this.flooded;
  }
}
