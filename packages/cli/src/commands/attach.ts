import type { RunResponse } from '@mada/protocol';
import { follow, framesOf } from '../chat/event-loop.js';
import { showAnswer } from '../chat/turn-end.js';
import { resolveSettings } from '../config/resolve.js';
import { CliError, EXIT_OK } from '../errors.js';
import { followRun } from '../stream/run-follower.js';
import { TurnProgress } from '../ui/progress.js';
import type { Terminal } from '../ui/terminal.js';
import { resolveRunId } from './id-prefix.js';
import { apiFlag, clientFor, type ServiceFlags } from './service.js';

export interface AttachFlags extends ServiceFlags {
  fromNow?: boolean;
}

const ACTIVE = new Set(['queued', 'running', 'waiting_approval']);

export const hasEnded = (run: RunResponse): boolean => !ACTIVE.has(run.status);

/**
 * `mada attach <run-id>`: a run's events, from the first (or, with --from-now, from the latest)
 * until it ends, shown as the chat shows a turn. A dropped connection is reattached by itself.
 */
export async function attachCommand(runId: string, flags: AttachFlags, terminal: Terminal): Promise<number> {
  const { values } = resolveSettings(apiFlag(flags));
  const client = clientFor(values);
  const run = await client.run(await resolveRunId(client, runId));
  terminal.print(terminal.style('dim', `Run ${run.id} · agent ${run.agent_type} · ${run.status} · ${run.working_dir}`));
  if (flags.fromNow && hasEnded(run)) {
    terminal.print(`The run has already ended: ${run.status}${run.error ? ` (${run.error})` : ''}`);
    return EXIT_OK;
  }
  const reattaching = (lastId: number): void => terminal.notice(`The connection dropped; reattaching after event ${lastId}…`);
  const progress = new TurnProgress(terminal, run.working_dir);
  progress.start();
  let outcome;
  try {
    const events = followRun(client, run.id, { after: flags.fromNow ? run.last_event_id : 0, onReattach: reattaching });
    outcome = await follow(framesOf(events), progress, {}, run.id);
  } catch (error) {
    progress.live?.close();
    throw error;
  } finally {
    progress.stop();
  }
  if (outcome.answer.trim() !== '' || outcome.end === 'done') showAnswer(terminal, outcome.answer, progress.live);
  if (outcome.end === 'error') throw new CliError(`The run ended with an error: ${outcome.message}`);
  if (outcome.end === 'closed') throw new CliError('The event stream ended before the run finished');
  return EXIT_OK;
}
