import { execFile } from 'node:child_process';
import { closeSync, constants, mkdtempSync, openSync, rmSync, unlinkSync } from 'node:fs';
import { join } from 'node:path';
import { processDir } from '../../../util/process-dir.js';

export interface PipeEnds {
  read: number;
  write: number;
}

/**
 * Kernel pipes between the commands of a pipeline. Node's own 'pipe' stdio is a socket pair, on
 * which a writer whose reader quit gets "Connection reset by peer" instead of SIGPIPE, unlike
 * bash; Node has no pipe(2), so each pipe is a FIFO, opened at both ends and unlinked at once, in
 * a directory only the service can enter (below its process directory).
 */
export class PipeFactory {
  private dir: string | undefined;
  private count = 0;

  /** `locate` finds mkfifo when the first pipe is needed. */
  constructor(private readonly locate: (program: string) => string | undefined) {}

  async create(): Promise<PipeEnds> {
    const mkfifo = this.locate('mkfifo');
    if (mkfifo === undefined) throw new Error('mkfifo is not installed, so pipelines cannot run');
    // In the process's own directory: a service killed with a pipeline running (SIGKILL skips
    // dispose) leaves it to the next one's sweep rather than in the temp directory for good.
    this.dir ??= mkdtempSync(join(processDir(), 'pipes-'));
    const path = join(this.dir, `p${this.count++}`);
    await new Promise<void>((resolve, reject) => {
      execFile(mkfifo, ['-m', '600', path], { env: {} }, (error) => (error ? reject(error) : resolve()));
    });
    // O_RDWR never blocks on a FIFO; holding it lets the blocking-mode ends open without waiting.
    const holder = openSync(path, constants.O_RDWR);
    try {
      const write = openSync(path, constants.O_WRONLY);
      const read = openSync(path, constants.O_RDONLY);
      return { read, write };
    } finally {
      closeSync(holder);
      unlinkSync(path);
    }
  }

  dispose(): void {
    if (this.dir !== undefined) rmSync(this.dir, { recursive: true, force: true });
  }
}
