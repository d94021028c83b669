import type { ChildProcess, StdioNull, StdioPipe } from 'node:child_process';
import type { Writable } from 'node:stream';
import { ARGS_FD, SECCOMP_FD } from './bubblewrap.js';
import type { Launch } from './launcher.js';
import { STATUS_FD } from './sandbox-status.js';
import { BLOCK_FD } from './user-network.js';

/**
 * The descriptors past stdin, stdout and stderr that a sandboxed launch needs, by their numbers:
 * bubblewrap's status (STATUS_FD), the block it waits on for its network (BLOCK_FD), the
 * arguments only bytes can spell (ARGS_FD) and the seccomp program (SECCOMP_FD). Node numbers extra stdio entries in order, so a gap
 * is filled with 'ignore' (/dev/null).
 */
export function sandboxStdio(launch: Pick<Launch, 'status' | 'userNetwork' | 'argumentBytes' | 'seccomp'>): (StdioPipe | StdioNull)[] {
  const wanted = new Set<number>();
  if (launch.status === true) wanted.add(STATUS_FD);
  if (launch.status === true && launch.userNetwork !== undefined) wanted.add(BLOCK_FD);
  if (launch.argumentBytes !== undefined) wanted.add(ARGS_FD);
  if (launch.seccomp !== undefined) wanted.add(SECCOMP_FD);
  const last = Math.max(2, ...wanted);
  const extra: (StdioPipe | StdioNull)[] = [];
  for (let fd = 3; fd <= last; fd++) extra.push(wanted.has(fd) ? 'pipe' : 'ignore');
  return extra;
}

/**
 * Writes the launch's argument bytes to bubblewrap's `--args` pipe and its seccomp program to the
 * `--seccomp` one, and closes them (bubblewrap reads each to the end).
 */
export function feedArguments(child: ChildProcess, launch: Pick<Launch, 'argumentBytes' | 'seccomp'>): void {
  feed(child, ARGS_FD, launch.argumentBytes);
  feed(child, SECCOMP_FD, launch.seccomp);
}

function feed(child: ChildProcess, fd: number, bytes: Buffer | undefined): void {
  if (bytes === undefined) return;
  // Node types five stdio entries; the others are there when sandboxStdio asked for them.
  const pipe = (child.stdio as readonly unknown[])[fd] as Writable | null | undefined;
  if (!pipe) return;
  // bubblewrap that failed to start closes it early: nothing to report beyond its own failure.
  pipe.on('error', () => {});
  pipe.end(bytes);
}
