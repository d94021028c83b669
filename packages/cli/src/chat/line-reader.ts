import { createInterface, type Interface } from 'node:readline';
import type { Completion } from './completer.js';

export interface LineReaderOptions {
  input: NodeJS.ReadableStream & { isTTY?: boolean };
  output: NodeJS.WritableStream & { isTTY?: boolean };
  history: string[];
  historySize: number;
  completer: (line: string) => Completion;
  /** Ctrl-C typed on the terminal; `lineEmpty` tells whether anything was typed at the prompt. */
  onInterrupt: (lineEmpty: boolean) => void;
}

/**
 * Lines from readline, one at a time, in order. Lines typed while a run is in progress wait
 * their turn (type-ahead); `read` answers null once input ends (Ctrl-D, end of a pipe, close).
 */
export class LineReader {
  readonly interactive: boolean;
  private readonly rl: Interface;
  private readonly queue: string[] = [];
  private waiter: ((line: string | null) => void) | undefined;
  private ended = false;

  constructor(options: LineReaderOptions) {
    this.interactive = Boolean(options.input.isTTY && options.output.isTTY);
    this.rl = createInterface({
      input: options.input,
      output: options.output,
      terminal: this.interactive,
      history: options.history,
      historySize: options.historySize,
      removeHistoryDuplicates: true,
      completer: options.completer,
      tabSize: 4,
    });
    this.rl.on('line', (line) => this.deliver(line));
    this.rl.on('close', () => {
      this.ended = true;
      this.deliver(null);
    });
    this.rl.on('SIGINT', () => options.onInterrupt(this.rl.line === ''));
  }

  /**
   * The next line; the prompt is shown only on a terminal and only when no line is waiting.
   * When `withdrawn` aborts first, the question is taken back: the promise rejects with its reason
   * and a line typed later waits for the next read.
   */
  read(prompt: string, withdrawn?: AbortSignal): Promise<string | null> {
    const queued = this.queue.shift();
    if (queued !== undefined) return Promise.resolve(queued);
    if (this.ended) return Promise.resolve(null);
    if (withdrawn?.aborted) return Promise.reject(withdrawn.reason);
    if (this.interactive) {
      this.rl.setPrompt(prompt);
      this.rl.prompt();
    }
    return new Promise((resolve, reject) => {
      const onWithdrawn = (): void => {
        if (this.waiter !== waiter) return;
        this.waiter = undefined;
        if (this.interactive) this.clearLine();
        reject(withdrawn?.reason);
      };
      const waiter = (line: string | null): void => {
        withdrawn?.removeEventListener('abort', onWithdrawn);
        resolve(line);
      };
      this.waiter = waiter;
      withdrawn?.addEventListener('abort', onWithdrawn, { once: true });
    });
  }

  /** Drops what was typed at the prompt (Ctrl-C on a non-empty line, as shells do). */
  clearLine(): void {
    this.rl.write(null, { ctrl: true, name: 'e' });
    this.rl.write(null, { ctrl: true, name: 'u' });
  }

  close(): void {
    this.rl.close();
  }

  private deliver(line: string | null): void {
    const waiter = this.waiter;
    this.waiter = undefined;
    if (waiter) waiter(line);
    else if (line !== null) this.queue.push(line);
  }
}
