import { PathOutsideError } from '../paths.js';
import { errorMessage } from '../../../util/error-message.js';

/** A command the policy will not run; the message is what the agent reads. */
export class CommandRefusal extends Error {
  constructor(readonly reason: string) {
    super(`Command not allowed: ${reason}`);
    this.name = 'CommandRefusal';
  }
}

export class WorkingDirectoryRefusal extends Error {
  constructor(readonly directory: string) {
    super(`Working directory not allowed: ${directory}`);
    this.name = 'WorkingDirectoryRefusal';
  }
}

export const refuse = (reason: string): never => {
  throw new CommandRefusal(reason);
};

/** Every error the policy raises on purpose; anything else is a bug and also refuses. */
export type PolicyError = CommandRefusal | PathOutsideError | WorkingDirectoryRefusal;

export function isPolicyError(error: unknown): error is PolicyError {
  return error instanceof CommandRefusal || error instanceof PathOutsideError || error instanceof WorkingDirectoryRefusal;
}

/** The message for any failure while checking: unexpected errors still refuse, never run. */
export function refusalMessage(error: unknown): string {
  if (isPolicyError(error)) return error.message;
  const detail = errorMessage(error);
  return `Command not allowed: the command could not be checked (${detail})`;
}
