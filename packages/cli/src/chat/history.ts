import { appendFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';

export const HISTORY_SIZE = 1000;

/**
 * The chat's input history: one entry per line, oldest first, appended as each line is entered
 * so a crash or a second window loses nothing. Entries are single lines by construction.
 */
export class HistoryFile {
  private failed = false;

  constructor(
    readonly path: string,
    private readonly onError: (message: string) => void,
    private readonly size = HISTORY_SIZE,
  ) {}

  /** Newest first, as readline's `history` option wants it. */
  load(): string[] {
    let lines: string[];
    try {
      lines = readFileSync(this.path, 'utf8').split('\n').filter((line) => line.trim() !== '');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') this.fail(error);
      return [];
    }
    // Keep the file from growing without end: rewrite it once it holds twice what is kept.
    if (lines.length > this.size * 2) this.rewrite(lines.slice(-this.size));
    return lines.slice(-this.size).reverse();
  }

  append(line: string): void {
    if (this.failed || line.trim() === '') return;
    try {
      mkdirSync(dirname(this.path), { recursive: true });
      appendFileSync(this.path, `${line}\n`, { mode: 0o600 });
    } catch (error) {
      this.fail(error);
    }
  }

  private rewrite(lines: string[]): void {
    try {
      writeFileSync(this.path, `${lines.join('\n')}\n`, { mode: 0o600 });
    } catch (error) {
      this.fail(error);
    }
  }

  /** History is a convenience: say so once and carry on without it. */
  private fail(error: unknown): void {
    if (this.failed) return;
    this.failed = true;
    this.onError(`history file ${this.path} not usable (${(error as Error).message}); history is not saved`);
  }
}
