import { resolveSettings } from '../config/resolve.js';
import { EXIT_OK } from '../errors.js';
import type { Terminal } from '../ui/terminal.js';
import { resolveRunId } from './id-prefix.js';
import { apiFlag, clientFor, type ServiceFlags } from './service.js';

/** `mada cancel <run-id>`: stops a run and prints the status it ended with. */
export async function cancelCommand(runId: string, flags: ServiceFlags, terminal: Terminal): Promise<number> {
  const { values } = resolveSettings(apiFlag(flags));
  const client = clientFor(values);
  const run = await client.cancelRun(await resolveRunId(client, runId));
  terminal.print(`Run ${run.id}: ${run.status}`);
  return EXIT_OK;
}
