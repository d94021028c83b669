export const EXIT_OK = 0;
export const EXIT_ERROR = 1;
export const EXIT_USAGE = 2;

/** A failure the user can act on: printed as one line (plus an optional hint), never a stack trace. */
export class CliError extends Error {
  constructor(
    message: string,
    readonly hint?: string,
    readonly exitCode: number = EXIT_ERROR,
  ) {
    super(message);
    this.name = 'CliError';
  }
}

/** Bad command-line usage: exit code 2. */
export class UsageError extends CliError {
  constructor(message: string, hint?: string) {
    super(message, hint, EXIT_USAGE);
    this.name = 'UsageError';
  }
}
