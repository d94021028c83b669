import type { RunResponse, RunStatus } from '@mada/protocol';
import { resolveSettings } from '../config/resolve.js';
import { EXIT_OK } from '../errors.js';
import { clip, printTable, uniqueShortIds, when } from '../ui/table.js';
import type { Terminal } from '../ui/terminal.js';
import { apiFlag, clientFor, type ServiceFlags } from './service.js';

export interface RunsFlags extends ServiceFlags {
  json?: boolean;
  limit: number;
  status?: RunStatus;
}

function row(run: RunResponse, id: string): string[] {
  return [id, run.status, run.agent_type, when(run.created_at), clip(run.prompt, 200)];
}

/** `mada runs`: the caller's stored runs, newest first. */
export async function runsCommand(flags: RunsFlags, terminal: Terminal): Promise<number> {
  const { values } = resolveSettings(apiFlag(flags));
  const list = await clientFor(values).listRuns(flags.limit, flags.status);
  if (flags.json) {
    terminal.printJson(list);
    return EXIT_OK;
  }
  if (list.runs.length === 0) {
    terminal.print(flags.status === undefined ? 'No runs yet. Start one with: mada chat' : `No ${flags.status} runs.`);
    return EXIT_OK;
  }
  const ids = uniqueShortIds(list.runs.map((run) => run.id));
  printTable([['ID', 'STATUS', 'AGENT', 'CREATED', 'PROMPT'], ...list.runs.map((run, index) => row(run, ids[index]!))], terminal, new Set(), true);
  terminal.print(terminal.style('dim', `${list.runs.length} of ${list.total} · follow one with: mada attach <id>`));
  return EXIT_OK;
}
