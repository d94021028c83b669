import type { RunResult } from './exec/run-script.js';
import { sandboxStartMessage } from './exec/sandbox-start.js';

export interface OutputFacts {
  timeoutSeconds: number;
  maxOutputChars: number;
}

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
  if (result.refusal !== undefined) lines.push(result.refusal);
  if (result.sandboxFailure !== undefined) lines.push(sandboxStartMessage(result.sandboxFailure));
  if (result.exitCode !== null && result.exitCode !== 0 && result.stopped === undefined) lines.push(`[exit code: ${result.exitCode}]`);
  return lines.join('\n');
}

export const runSucceeded = (result: RunResult): boolean =>
  result.exitCode === 0 && result.stopped === undefined && result.refusal === undefined && result.sandboxFailure === undefined;
