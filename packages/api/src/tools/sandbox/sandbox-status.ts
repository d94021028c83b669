import type { ChildProcess } from 'node:child_process';
import type { Readable } from 'node:stream';

/**
 * Where bubblewrap writes its status (`--json-status-fd`): one JSON document with the sandbox's
 * pid as soon as it is made, and a second with the command's exit code only if bubblewrap got as
 * far as starting the command. The command itself never holds this descriptor (bubblewrap closes
 * it in the sandbox), so what arrives here is bubblewrap's word alone.
 */
export const STATUS_FD = 3;

/** bubblewrap writes two short documents; anything past this is not bubblewrap talking. */
const STATUS_LIMIT = 16 * 1024;

/** What bubblewrap said about one sandbox. */
export interface SandboxStatus {
  /** The sandbox's first process (its PID namespace's init), as the service sees it; undefined if it was never made. */
  childPid: Promise<number | undefined>;
  /** Once bubblewrap has closed its status: whether it started the command. */
  started: Promise<boolean>;
}

/** Reads the status of a bubblewrap child spawned with a pipe at STATUS_FD. */
export function readSandboxStatus(child: ChildProcess): SandboxStatus {
  const stream = child.stdio[STATUS_FD] as Readable | null | undefined;
  let text = '';
  let pid: ((value: number | undefined) => void) | undefined;
  const childPid = new Promise<number | undefined>((resolve) => (pid = resolve));
  const started = new Promise<boolean>((resolve) => {
    if (!stream) {
      pid?.(undefined);
      resolve(false);
      return;
    }
    const end = (): void => {
      pid?.(undefined);
      resolve(/"exit-code"\s*:\s*-?\d+/.test(text));
    };
    stream.on('data', (chunk: Buffer) => {
      if (text.length >= STATUS_LIMIT) return;
      text += chunk.toString('utf8').slice(0, STATUS_LIMIT - text.length);
      const found = /"child-pid"\s*:\s*(\d+)/.exec(text)?.[1];
      if (found !== undefined) pid?.(Number(found));
    });
    stream.once('end', end);
    stream.once('close', end);
    stream.once('error', end);
  });
  return { childPid, started };
}
