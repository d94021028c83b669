import { resolveSettings } from '../config/resolve.js';
import { EXIT_OK } from '../errors.js';
import { safeText } from '../ui/safe-text.js';
import type { Terminal } from '../ui/terminal.js';
import { apiFlag, clientFor, type ServiceFlags } from './service.js';

export interface ModelsFlags extends ServiceFlags {
  json?: boolean;
}

/** `mada models`: the models `--model` and `model <name>` may name, each with its window and tool-call mode. */
export async function modelsCommand(flags: ModelsFlags, terminal: Terminal): Promise<number> {
  const { values } = resolveSettings(apiFlag(flags));
  const { models } = await clientFor(values).models();
  if (flags.json) {
    terminal.printJson({ models });
    return EXIT_OK;
  }
  // Names come from the service's settings; printed safe all the same.
  const names = models.map((model) => safeText(model.name));
  const width = Math.max(0, ...names.map((name) => name.length));
  models.forEach((model, index) => {
    const notes = [`${model.context_window} tokens`, model.tool_calls === 'native' ? 'native tool calls' : 'tool calls as text'];
    if (model.default) notes.push(terminal.style('bold', 'default'));
    if (!model.available) notes.push(terminal.style('red', 'missing from the runtime'));
    terminal.print(`${names[index]!.padEnd(width)}  ${notes.join(' · ')}`);
  });
  return EXIT_OK;
}
