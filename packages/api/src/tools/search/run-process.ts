import { spawn } from 'node:child_process';
import { releaseFifoWaits, type FifoPlaces } from '../../util/fifo-release.js';
import { signalGroup } from '../sandbox/exec/process-group.js';

export interface ProcessOutcome {
  code: number | null;
  stderr: string;
}

const STDERR_LIMIT = 4096;

/** How the process is started: as is, or wrapped (in the sandbox). */
export type ProcessWrapper = (binary: string, args: readonly string[], cwd: string) => { file: string; args: string[] };

const unwrapped: ProcessWrapper = (binary, args) => ({ file: binary, args: [...args] });

/**
 * Runs `binary` with `args` (no shell) and hands stdout to `onRecord` split at `separator`,
 * without holding the whole output. When `signal` aborts, the promise rejects and the process's
 * whole group is killed: in the sandbox that group holds bubblewrap's PID-namespace init too.
 */
export function runProcess(
  binary: string,
  args: readonly string[],
  options: {
    cwd: string;
    signal: AbortSignal;
    separator: string;
    onRecord: (record: string) => void;
    wrap?: ProcessWrapper;
    /** FIFOs the process may open and wait on (ignore files): released while it waits. */
    fifos?: FifoPlaces;
  },
): Promise<ProcessOutcome> {
  const launch = (options.wrap ?? unwrapped)(binary, args, options.cwd);
  return new Promise((resolve, reject) => {
    if (options.signal.aborted) {
      reject(options.signal.reason);
      return;
    }
    const child = spawn(launch.file, launch.args, {
      cwd: options.cwd,
      stdio: ['ignore', 'pipe', 'pipe'],
      // A group (and session) of its own: no terminal, and one kill reaches every process.
      detached: true,
      // The child gets nothing of the service's environment but where programs live.
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin' },
    });
    const stopWatch = options.fifos === undefined ? () => undefined : releaseFifoWaits(child.pid, options.fifos);
    const kill = (): void => {
      if (child.pid !== undefined) signalGroup(child.pid, 'SIGKILL');
    };
    const onAbort = (): void => {
      kill();
      reject(options.signal.reason);
    };
    options.signal.addEventListener('abort', onAbort, { once: true });
    let pending = '';
    let stderr = '';
    let failure: unknown;
    const deliver = (records: readonly string[]): void => {
      try {
        for (const record of records) options.onRecord(record);
      } catch (error) {
        failure ??= error;
        kill();
      }
    };
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (chunk: string) => {
      if (failure !== undefined) return;
      const records = (pending + chunk).split(options.separator);
      pending = records.pop() ?? '';
      deliver(records);
    });
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (chunk: string) => {
      if (stderr.length < STDERR_LIMIT) stderr += chunk;
    });
    child.on('error', (error) => {
      stopWatch();
      options.signal.removeEventListener('abort', onAbort);
      reject(error);
    });
    child.on('close', (code) => {
      stopWatch();
      options.signal.removeEventListener('abort', onAbort);
      if (pending !== '' && failure === undefined) deliver([pending]);
      if (failure !== undefined) reject(failure);
      else resolve({ code, stderr: stderr.slice(0, STDERR_LIMIT) });
    });
  });
}
