import type { FileHandle } from 'node:fs/promises';
import { shortenLine } from './text.js';

export interface LineWindow {
  /** A NUL byte in the first chunk: the file was not read further. */
  binary: boolean;
  /** The lines from `offset` on, at most `limit`, without terminators, long ones shortened. */
  lines: string[];
  /** How many of `lines` were shortened. */
  shortened: number;
  /** Lines follow the window. */
  hasMore: boolean;
  /** The window ended before `limit` lines because it reached `maxWindowChars`. */
  fullAtSize: boolean;
  /** Lines in the file, known only when the end was reached. */
  totalLines?: number;
}

/** Characters a shown line takes besides its text (a number of 6 columns and a tab, a newline). */
const SHOWN_LINE_OVERHEAD = 8;

/** The one line being read, holding at most `max + 1` characters of it. */
class LineBuffer {
  private text = '';
  private length = 0;
  constructor(private readonly max: number) {}

  append(piece: string): void {
    if (this.text.length <= this.max) this.text += piece.slice(0, this.max + 1 - this.text.length);
    this.length += piece.length;
  }

  get empty(): boolean {
    return this.length === 0;
  }

  /** The line for display; a `\r` before the newline is a terminator, not content. */
  take(): { line: string; shortened: boolean } {
    let text = this.text;
    let length = this.length;
    if (length <= this.max + 1 && text.endsWith('\r')) {
      text = text.slice(0, -1);
      length--;
    }
    this.text = '';
    this.length = 0;
    return { line: shortenLine(text, this.max), shortened: length > this.max };
  }
}

/**
 * Lines `offset` (0-based) to `offset + limit` of a UTF-8 file, streamed: the file is read only as
 * far as the window needs, and a huge line costs no more memory than `maxLineChars`. The window
 * also ends once its lines, as shown, hold `maxWindowChars`: `limit` is the model's to choose, and millions
 * of lines would be held, joined and sent on whole. `signal` ends the read between chunks.
 */
export async function readLineWindow(
  file: FileHandle,
  offset: number,
  limit: number,
  maxLineChars: number,
  maxWindowChars: number,
  signal: AbortSignal,
): Promise<LineWindow> {
  const window: LineWindow = { binary: false, lines: [], shortened: 0, hasMore: false, fullAtSize: false };
  const end = offset + limit;
  const buffer = new LineBuffer(maxLineChars);
  let index = 0;
  let windowChars = 0;
  let first = true;
  const full = (): boolean => index >= end || windowChars >= maxWindowChars;
  const more = (): LineWindow => ({ ...window, hasMore: true, fullAtSize: index < end });
  const finishLine = (): void => {
    const { line, shortened } = buffer.take();
    if (index >= offset) {
      window.lines.push(line);
      windowChars += line.length + SHOWN_LINE_OVERHEAD;
      if (shortened) window.shortened++;
    }
    index++;
  };
  for await (const chunk of file.createReadStream({ encoding: 'utf8', highWaterMark: 64 * 1024, autoClose: false }) as AsyncIterable<string>) {
    // A far offset in a sparse file of a terabyte reads for many minutes: the deadline ends it.
    signal.throwIfAborted();
    if (first && chunk.includes('\0')) return { ...window, binary: true };
    first = false;
    for (let start = 0; start < chunk.length; ) {
      if (full()) return more();
      const newline = chunk.indexOf('\n', start);
      const stop = newline === -1 ? chunk.length : newline;
      if (index >= offset) buffer.append(chunk.slice(start, stop));
      else if (stop > start) buffer.append('x'); // only whether the line has content matters here
      if (newline === -1) break;
      finishLine();
      start = newline + 1;
    }
  }
  if (!buffer.empty) {
    if (full()) return more();
    finishLine();
  }
  return { ...window, totalLines: index };
}
