import type { RunChangesResponse } from '@mada/protocol';
import type { ApiClient } from '../api/client.js';
import { resolveSettings } from '../config/resolve.js';
import { EXIT_OK } from '../errors.js';
import { safeText } from '../ui/safe-text.js';
import type { Terminal } from '../ui/terminal.js';
import { resolveRunId } from './id-prefix.js';
import { apiFlag, clientFor, type ServiceFlags } from './service.js';

export interface RevertFlags extends ServiceFlags {
  force?: boolean;
}

/** The colour git diff gives a line: headers bold, hunks cyan, removals red, additions green. */
function paint(line: string, terminal: Terminal): string {
  if (/^(diff --git|index |--- |\+\+\+ |old mode|new mode|deleted file|new file)/.test(line)) return terminal.style('bold', line);
  if (line.startsWith('@@')) return terminal.style('cyan', line);
  if (line.startsWith('+')) return terminal.style('green', line);
  if (line.startsWith('-')) return terminal.style('red', line);
  if (line.startsWith('#')) return terminal.style('yellow', line);
  return line;
}

/** Prints a run's changes: a summary line per file, then the diff (coloured on a terminal, plain when piped). */
export function printChanges(changes: RunChangesResponse, terminal: Terminal): void {
  if (changes.files.length === 0) {
    terminal.print('The run changed no files.');
    return;
  }
  for (const file of changes.files) terminal.print(`${file.change.padEnd(8)} ${safeText(file.path)} (+${file.additions} -${file.deletions})`);
  terminal.print('');
  for (const line of changes.diff.replace(/\n$/, '').split('\n')) terminal.print(paint(safeText(line), terminal));
}

export function printReverted(reverted: readonly string[], terminal: Terminal): void {
  if (reverted.length === 0) terminal.print('Nothing to revert: the run changed no files.');
  else terminal.print(`Reverted ${reverted.length} file(s): ${reverted.join(', ')}`);
}

/** `mada diff <run-id>`. */
export async function diffCommand(runId: string, flags: ServiceFlags, terminal: Terminal): Promise<number> {
  const { values } = resolveSettings(apiFlag(flags));
  const client = clientFor(values);
  printChanges(await client.runChanges(await resolveRunId(client, runId)), terminal);
  return EXIT_OK;
}

/** `mada revert <run-id> [--force]`. */
export async function revertCommand(runId: string, flags: RevertFlags, terminal: Terminal): Promise<number> {
  const { values } = resolveSettings(apiFlag(flags));
  const client = clientFor(values);
  printReverted((await client.revertRun(await resolveRunId(client, runId), flags.force ?? false)).reverted, terminal);
  return EXIT_OK;
}

/**
 * Chat's `/diff` and `/undo`: the same, for the last run the client saw in this session (the
 * service names each run in its `X-Run-Id` header).
 */
export async function lastRunCommand(command: 'diff' | 'undo', client: ApiClient, terminal: Terminal, force = false): Promise<void> {
  const runId = client.lastRunId;
  if (!runId) {
    terminal.print('No run yet in this session.');
    return;
  }
  if (command === 'diff') printChanges(await client.runChanges(runId), terminal);
  else printReverted((await client.revertRun(runId, force)).reverted, terminal);
}
