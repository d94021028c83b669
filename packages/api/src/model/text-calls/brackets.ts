const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const isOpening = (c: number): boolean => c === 0x7b || c === 0x5b;
const isClosing = (c: number): boolean => c === 0x7d || c === 0x5d;

/**
 * Where each bracket of one text closes, each worked out once. Finding the close of every
 * candidate bracket afresh costs time quadratic in the text when brackets do not close (an answer
 * of thousands of `{`, or of `[TOOL_CALLS][` markers): a scan from one bracket passes over every
 * bracket after it. Here one scan records the close of every bracket it passes outside a string,
 * and a later scan reaching a recorded bracket jumps over it (or stops, when it never closes).
 */
export class Brackets {
  /** Per position: 0 not worked out yet, -1 never closes, else the index just past its close. */
  private closes: Int32Array | undefined;

  constructor(private readonly text: string) {}

  /**
   * Index just past the bracket closing the one at `start` (which must be `{` or `[`), ignoring
   * brackets inside strings; -1 if none. The same answer as scanning from `start` alone.
   */
  close(start: number): number {
    const closes = (this.closes ??= new Int32Array(this.text.length));
    if (closes[start] !== 0) return closes[start]!;
    const text = this.text;
    const open: number[] = [];
    let inString = false;
    for (let i = start; i < text.length; i++) {
      const c = text.charCodeAt(i);
      if (inString) {
        if (c === BACKSLASH) i++;
        else if (c === QUOTE) inString = false;
      } else if (c === QUOTE) inString = true;
      else if (isOpening(c)) {
        const known = closes[i]!;
        // A scan from this bracket, outside a string as here, went on the same way as this one.
        if (known < 0) break;
        if (known > 0) i = known - 1;
        else open.push(i);
      } else if (isClosing(c)) {
        const opened = open.pop();
        if (opened === undefined) break;
        closes[opened] = i + 1;
        if (open.length === 0) return i + 1;
      }
    }
    for (const opened of open) closes[opened] = -1;
    return -1;
  }
}
