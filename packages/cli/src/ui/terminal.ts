import { clearScreenDown, cursorTo, moveCursor } from 'node:readline';
import { styleText } from 'node:util';
import { safeJson, safeOutput, safeText } from './safe-text.js';

type Format = Parameters<typeof styleText>[0];

export interface TerminalStreams {
  stdout: NodeJS.WritableStream & { isTTY?: boolean; columns?: number; rows?: number };
  stderr: NodeJS.WritableStream & { isTTY?: boolean };
  env: NodeJS.ProcessEnv;
}

const noColorRequested = (env: NodeJS.ProcessEnv): boolean => env.NO_COLOR !== undefined && env.NO_COLOR !== '';

/**
 * Where output goes and how it may look. Colour, spinners and rendered markdown need a TTY and
 * no NO_COLOR (https://no-color.org); otherwise everything is plain text fit for a pipe or a log.
 */
export class Terminal {
  readonly rich: boolean;
  private readonly richErrors: boolean;

  constructor(private readonly streams: TerminalStreams = { stdout: process.stdout, stderr: process.stderr, env: process.env }) {
    const noColor = noColorRequested(streams.env);
    this.rich = Boolean(streams.stdout.isTTY) && !noColor;
    this.richErrors = Boolean(streams.stderr.isTTY) && !noColor;
  }

  /** The same terminal writing everything to stderr: progress that must stay out of a script's stdout (`mada run`). */
  toStderr(): Terminal {
    const { stderr, env } = this.streams;
    return new Terminal({ stdout: stderr, stderr, env });
  }

  get stdout(): NodeJS.WritableStream {
    return this.streams.stdout;
  }

  get columns(): number {
    return this.streams.stdout.columns ?? 80;
  }

  /** The screen's height; undefined when output is not a terminal (nothing scrolls out of sight). */
  get rows(): number | undefined {
    return this.streams.stdout.isTTY ? this.streams.stdout.rows : undefined;
  }

  /** How many screen rows `text` takes once wrapped (a character counted as one column). */
  rowsFor(text: string): number {
    return text.split('\n').reduce((rows, line) => rows + Math.max(1, Math.ceil([...line].length / this.columns)), 0);
  }

  style(format: Format, text: string): string {
    return this.rich ? styleText(format, text) : text;
  }

  /**
   * Every line goes through the output guard: callers clean the service text they style (with
   * safeText), and whatever they missed still cannot do more than colour.
   */
  print(text = ''): void {
    this.streams.stdout.write(`${safeOutput(text)}\n`);
  }

  /** Text without a line end, as it arrives (the answer being written); the same guard as print. */
  write(text: string): void {
    this.streams.stdout.write(safeOutput(text));
  }

  /** Takes back the last `rows` rows, the cursor's own included: for text about to be shown again, rendered. */
  eraseRowsBack(rows: number): void {
    const out = this.streams.stdout;
    cursorTo(out, 0);
    if (rows > 1) moveCursor(out, 0, -(rows - 1));
    clearScreenDown(out);
  }

  /** A value for scripts (`--json`): exact, and safe to show on a terminal. */
  printJson(value: unknown): void {
    this.streams.stdout.write(`${safeJson(value)}\n`);
  }

  /** One value as one line of JSON (JSON Lines), for a stream of values. */
  printJsonLine(value: unknown): void {
    this.streams.stdout.write(`${safeJson(value, 0)}\n`);
  }

  /** A failure as one line: what went wrong, then what to do about it. Both may quote the service. */
  error(message: string, hint?: string): void {
    const paint = (format: Format, text: string): string => (this.richErrors ? styleText(format, text) : text);
    const advice = hint ? paint('dim', `; ${safeText(hint)}`) : '';
    this.streams.stderr.write(`${paint('red', 'mada:')} ${safeText(message)}${advice}\n`);
  }

  notice(message: string): void {
    const clean = safeText(message);
    const text = this.richErrors ? styleText('yellow', clean) : clean;
    this.streams.stderr.write(`${text}\n`);
  }
}
