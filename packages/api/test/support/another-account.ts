import { spawn, type ChildProcess } from 'node:child_process';

/** The unprivileged account of Debian and most Linux systems. */
export const NOBODY = 65534;

/** Whether this process may act as another account (the tests that need it run only as root). */
export const canActAsAnotherAccount = process.getuid?.() === 0;

/**
 * Runs a Python program as another local account (nobody), standing in for another user's
 * client on the same machine. It is the system's Python: a Node binary under root's home, as
 * CI's Node 24 is, cannot be run by another account.
 */
export function pythonAsAnotherAccount(script: string): ChildProcess {
  return spawn('/usr/bin/python3', ['-c', script], { uid: NOBODY, gid: NOBODY, cwd: '/', stdio: ['pipe', 'pipe', 'inherit'] });
}

/** Waits for the program's next line of output. */
export function nextLine(child: ChildProcess): Promise<string> {
  return new Promise((resolve, reject) => {
    let text = '';
    const onData = (chunk: Buffer): void => {
      text += chunk.toString('utf8');
      const end = text.indexOf('\n');
      if (end < 0) return;
      child.stdout!.off('data', onData);
      child.off('exit', onExit);
      resolve(text.slice(0, end));
    };
    const onExit = (code: number | null): void => reject(new Error(`the other account's program exited (${code}) before a line`));
    child.stdout!.on('data', onData);
    child.once('exit', onExit);
  });
}
