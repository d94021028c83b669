import { spawn } from 'node:child_process';

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
 * without holding the whole output. Killed when `signal` aborts; the promise then rejects.
 */
export function runProcess(
  binary: string,
  args: readonly string[],
  options: { cwd: string; signal: AbortSignal; separator: string; onRecord: (record: string) => void; wrap?: ProcessWrapper },
): Promise<ProcessOutcome> {
  const launch = (options.wrap ?? unwrapped)(binary, args, options.cwd);
  return new Promise((resolve, reject) => {
    const child = spawn(launch.file, launch.args, {
      cwd: options.cwd,
      stdio: ['ignore', 'pipe', 'pipe'],
      signal: options.signal,
      // The child gets nothing of the service's environment but where programs live.
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin' },
    });
    let pending = '';
    let stderr = '';
    let failure: unknown;
    const deliver = (records: readonly string[]): void => {
      try {
        for (const record of records) options.onRecord(record);
      } catch (error) {
        failure ??= error;
        child.kill();
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
    child.on('error', reject);
    child.on('close', (code) => {
      if (pending !== '' && failure === undefined) deliver([pending]);
      if (failure !== undefined) reject(failure);
      else resolve({ code, stderr: stderr.slice(0, STDERR_LIMIT) });
    });
  });
}
