import type { SandboxStatus } from '../sandbox-status.js';

/**
 * bubblewrap could not set the sandbox up for a command, so the command never started (and, in
 * its place, bubblewrap exited non-zero with its own complaint on the command's stderr). A fault of
 * the host, not of the command: the script stops here rather than take it for the command's status.
 */
export class SandboxStartError extends Error {
  override readonly name = 'SandboxStartError';

  constructor(
    readonly programs: readonly string[],
    readonly attempts: number,
  ) {
    super(`the sandbox could not be set up for ${programs.join(', ')}`);
  }
}

/** The line the tool result ends with: said so that no one takes it for the command's own failure. */
export function sandboxStartMessage(error: SandboxStartError): string {
  const tries = error.attempts > 1 ? ` (tried ${error.attempts} times)` : '';
  return `[sandbox error: bubblewrap failed to set up the sandbox${tries}, so ${error.programs.join(', ')} did not run, nor anything after it; a fault of the service's host, not of the command]`;
}

/**
 * Whether a sandboxed process ended without bubblewrap starting its command: bubblewrap reports
 * an exit code only for a command it started. A process killed by a signal (a stop, or a command
 * that killed its own bubblewrap) is not counted: its command may have run.
 */
export async function failedBeforeStart(status: SandboxStatus | undefined, exit: Promise<{ code: number | null }>): Promise<boolean> {
  if (status === undefined) return false;
  const { code } = await exit;
  return code !== null && code !== 0 && !(await status.started);
}
