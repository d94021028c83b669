import { constants } from 'node:os';
import type { RunResult } from './exec/run-script.js';
import { sandboxStartMessage } from './exec/sandbox-start.js';

export interface OutputFacts {
  timeoutSeconds: number;
  maxOutputChars: number;
  /** SANDBOX_MAX_FILE_MB, when the commands ran confined (under that limit). */
  maxFileMb?: number;
  /** Why the run's guard stopped the commands (the disk floor). */
  guardNote?: string;
}

/** A confined command's status when the kernel killed it for writing past RLIMIT_FSIZE: bubblewrap reports 128 + the signal. */
const FILE_TOO_LARGE = 128 + constants.signals.SIGXFSZ;

/**
 * The text an agent reads for a shell run: the commands' stdout and stderr together, in the order
 * they were written (as in a terminal), then one bracketed line per notable fact: truncation, a
 * non-zero exit code, a timeout or cancellation, a command refused when its turn came.
 */
export function formatRunOutput(result: RunResult, facts: OutputFacts): string {
  const lines: string[] = [];
  const output = result.output.replace(/\n$/, '');
  lines.push(output === '' ? '(no output)' : output);
  if (result.truncated) lines.push(`[output truncated: only the first ${facts.maxOutputChars} characters are shown]`);
  if (result.stopped === 'timeout') lines.push(`[timed out after ${facts.timeoutSeconds} s: all processes were stopped]`);
  if (result.stopped === 'abort') lines.push('[cancelled: all processes were stopped]');
  if (result.stopped === 'flood') lines.push('[stopped: the command kept printing far past the output limit]');
  if (result.stopped === 'guard' && facts.guardNote !== undefined) lines.push(facts.guardNote);
  if (facts.maxFileMb !== undefined && result.statuses.includes(FILE_TOO_LARGE)) {
    lines.push(`[a process was killed (SIGXFSZ) for writing a file past the size limit of ${facts.maxFileMb} MiB (SANDBOX_MAX_FILE_MB); the file was cut there]`);
  }
  if (result.refusal !== undefined) lines.push(result.refusal);
  if (result.sandboxFailure !== undefined) lines.push(sandboxStartMessage(result.sandboxFailure));
  if (result.exitCode !== null && result.exitCode !== 0 && result.stopped === undefined) lines.push(`[exit code: ${result.exitCode}]`);
  return lines.join('\n');
}

export const runSucceeded = (result: RunResult): boolean =>
  result.exitCode === 0 && result.stopped === undefined && result.refusal === undefined && result.sandboxFailure === undefined;
