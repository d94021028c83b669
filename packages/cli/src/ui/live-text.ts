import { renderAnswer } from './markdown.js';
import { safeText } from './safe-text.js';
import type { Terminal } from './terminal.js';

/** Characters that may take two columns (or none): past this point the row count is a guess. */
const MAYBE_NOT_ONE_COLUMN = /[^\n\u0020-\u10ff]/u;

/**
 * The answer written as it arrives, in segments: text until the next tool line, thinking line or
 * question. Whitespace at a segment's edges is held back (so what is shown is the trimmed text, as
 * the whole answer was shown before). At the end, on a rich terminal, the last segment is put back
 * as rendered markdown when all of it is still on the screen; otherwise it stays as written.
 */
export class LiveText {
  /** What the open segment has shown, trimmed at its start. */
  private segment = '';
  /** Whitespace received but not yet shown: shown only once more text follows it. */
  private held = '';
  private shownAny = false;

  constructor(private readonly terminal: Terminal) {}

  get open(): boolean {
    return this.segment !== '';
  }

  /** Whether any answer text reached the screen this turn. */
  get shown(): boolean {
    return this.shownAny;
  }

  write(piece: string): void {
    let text = this.held + safeText(piece);
    if (this.segment === '') text = text.trimStart();
    const body = text.trimEnd();
    this.held = text.slice(body.length);
    if (body === '') return;
    this.terminal.write(body);
    this.segment += body;
    this.shownAny = true;
  }

  /** Ends the open segment on its own line, so what comes next starts on a fresh one. */
  close(): void {
    if (this.segment !== '') this.terminal.write('\n');
    this.segment = '';
    this.held = '';
  }

  /** The end of the answer: the last segment rendered in place when it can be, then a fresh line. */
  finish(): void {
    const segment = this.segment;
    if (segment === '') return this.close();
    const rows = this.terminal.rowsFor(segment);
    const screen = this.terminal.rows;
    if (!this.terminal.rich || screen === undefined || rows >= screen || MAYBE_NOT_ONE_COLUMN.test(segment)) return this.close();
    this.terminal.eraseRowsBack(rows);
    this.segment = '';
    this.held = '';
    this.terminal.print(renderAnswer(segment, this.terminal));
  }
}
