import { readFileSync } from 'node:fs';

/** Whether a process with this pid exists (EPERM: it does, it is another account's). */
export function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Whether the process with this pid has ended: gone, or a zombie that nobody reaped (a service
 * killed under a parent that died with it, in a container whose first process never reaps). A
 * zombie holds only its pid, so what it left may be cleaned up. Where /proc does not say, the
 * process counts as running.
 */
export function processEnded(pid: number): boolean {
  if (!pidAlive(pid)) return true;
  try {
    // The state follows the command name's closing parenthesis; the name itself may hold one.
    return /^.*\) (\S)/s.exec(readFileSync(`/proc/${pid}/stat`, 'latin1'))?.[1] === 'Z';
  } catch {
    return false;
  }
}
