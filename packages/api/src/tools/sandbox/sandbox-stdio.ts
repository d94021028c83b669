import type { ChildProcess, StdioNull, StdioPipe } from 'node:child_process';
import type { Writable } from 'node:stream';
import { ARGS_FD } from './bubblewrap.js';
import type { Launch } from './launcher.js';
import { STATUS_FD } from './sandbox-status.js';
import { BLOCK_FD } from './user-network.js';

/**
 * The descriptors past stdin, stdout and stderr that a sandboxed launch needs, by their numbers:
 * bubblewrap's status (STATUS_FD), the block it waits on for its network (BLOCK_FD) and the
 * arguments only bytes can spell (ARGS_FD). Node numbers extra stdio entries in order, so a gap
 * is filled with 'ignore' (/dev/null).
 */
export function sandboxStdio(launch: Pick<Launch, 'status' | 'userNetwork' | 'argumentBytes'>): (StdioPipe | StdioNull)[] {
  const wanted = new Set<number>();
  if (launch.status === true) wanted.add(STATUS_FD);
  if (launch.status === true && launch.userNetwork !== undefined) wanted.add(BLOCK_FD);
  if (launch.argumentBytes !== undefined) wanted.add(ARGS_FD);
  const last = Math.max(2, ...wanted);
  const extra: (StdioPipe | StdioNull)[] = [];
  for (let fd = 3; fd <= last; fd++) extra.push(wanted.has(fd) ? 'pipe' : 'ignore');
  return extra;
}

/** Writes the launch's argument bytes to bubblewrap's `--args` pipe and closes it (bubblewrap reads to the end). */
export function feedArguments(child: ChildProcess, launch: Pick<Launch, 'argumentBytes'>): void {
  if (launch.argumentBytes === undefined) return;
  // Node types five stdio entries; the sixth is there when sandboxStdio asked for it.
  const pipe = (child.stdio as readonly unknown[])[ARGS_FD] as Writable | null | undefined;
  if (!pipe) return;
  // bubblewrap that failed to start closes it early: nothing to report beyond its own failure.
  pipe.on('error', () => {});
  pipe.end(launch.argumentBytes);
}
