import { closeSync, constants, fstatSync, openSync } from 'node:fs';

const { O_RDONLY, O_WRONLY, O_CREAT, O_TRUNC, O_APPEND, O_NOFOLLOW, O_NOCTTY, O_NONBLOCK } = constants;

/**
 * Opens a redirection target that the policy resolved to a real path a moment ago. The service
 * opens it itself, so: O_NOFOLLOW fails if the last component was swapped for a symbolic link
 * since, O_NONBLOCK keeps a FIFO from blocking the service, and anything but a regular file is
 * refused.
 */
export function openTarget(path: string, mode: 'read' | 'write' | 'append'): number {
  const common = O_NOFOLLOW | O_NOCTTY | O_NONBLOCK;
  const fd =
    mode === 'read'
      ? openSync(path, O_RDONLY | common)
      : openSync(path, O_WRONLY | O_CREAT | common | (mode === 'append' ? O_APPEND : O_TRUNC), 0o666);
  if (!fstatSync(fd).isFile()) {
    closeSync(fd);
    throw new Error(`${path}: redirections work only with regular files`);
  }
  return fd;
}
