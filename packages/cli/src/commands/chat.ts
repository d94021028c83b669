import type { PermissionMode } from '@mada/protocol';
import { expandHome } from '../config/home.js';
import type { FlagValues } from '../config/resolve.js';
import { resolveSettings } from '../config/resolve.js';
import { Chat } from '../chat/repl.js';
import type { Terminal } from '../ui/terminal.js';
import { cliVersion } from '../version.js';
import { workingDirectory } from './directory.js';
import { apiFlag, clientFor, type ServiceFlags } from './service.js';

export interface ChatFlags extends ServiceFlags {
  directory?: string;
  agent: string;
  mode?: PermissionMode;
  stream?: boolean;
  resume?: string;
  model?: string;
}

function chatFlags(flags: ChatFlags): FlagValues {
  return {
    ...apiFlag(flags),
    ...(flags.mode === undefined ? {} : { mode: { raw: flags.mode, flag: '--mode' } }),
    ...(flags.stream === undefined ? {} : { stream: { raw: flags.stream, flag: flags.stream ? '--stream' : '--no-stream' } }),
  };
}

/** `mada chat` (the default command): the interactive session. */
export async function chatCommand(flags: ChatFlags, terminal: Terminal): Promise<number> {
  const { values } = resolveSettings(chatFlags(flags));
  const chat = new Chat({
    client: clientFor(values),
    terminal,
    input: process.stdin,
    output: process.stdout,
    historyFile: expandHome(values.historyFile),
    title: `mada ${cliVersion()} · ${values.apiUrl} · mode ${values.mode}`,
    start: {
      agentType: flags.agent,
      workingDir: workingDirectory(flags.directory),
      directoryGiven: flags.directory !== undefined,
      mode: values.mode,
      stream: values.stream,
      resumeId: flags.resume,
      model: flags.model,
    },
  });
  return chat.run();
}
