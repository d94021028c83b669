import { resolveSettings } from '../config/resolve.js';
import { CliError, EXIT_OK } from '../errors.js';
import { renderAnswer } from '../ui/markdown.js';
import { TurnProgress } from '../ui/progress.js';
import type { Terminal } from '../ui/terminal.js';
import { workingDirectory } from './directory.js';
import { apiFlag, clientFor, type ServiceFlags } from './service.js';

export interface ExploreFlags extends ServiceFlags {
  directory?: string;
}

/** `mada explore <query>`: a one-shot explore run, kept for old scripts; `mada chat --agent explore` replaces it. */
export async function exploreCommand(words: string[], flags: ExploreFlags, terminal: Terminal): Promise<number> {
  terminal.notice('mada explore is deprecated and will be removed; use `mada chat --agent explore` instead.');
  const { values } = resolveSettings(apiFlag(flags));
  const workingDir = workingDirectory(flags.directory);
  const progress = new TurnProgress(terminal, workingDir);
  progress.start();
  let reply;
  try {
    reply = await clientFor(values).runAgent({ agent_type: 'explore', prompt: words.join(' '), working_dir: workingDir, mode: 'default' });
  } finally {
    progress.stop();
  }
  if (!reply.success) throw new CliError(`The explore run failed: ${reply.error ?? 'no reason given'}`);
  terminal.print(renderAnswer(reply.response, terminal));
  return EXIT_OK;
}
