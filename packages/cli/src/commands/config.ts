import { writeDefaultConfig } from '../config/config-file.js';
import { configFilePath, tildify } from '../config/home.js';
import { SETTING_KEYS, SETTING_NAMES } from '../config/keys.js';
import { describeSource, resolveSettings } from '../config/resolve.js';
import { EXIT_OK } from '../errors.js';
import type { Terminal } from '../ui/terminal.js';

export interface ConfigFlags {
  init?: boolean;
  force?: boolean;
  json?: boolean;
}

/** Enough of a key to tell which one is set, never enough to use it. */
function masked(key: string): string {
  return key.length <= 8 ? '****' : `****${key.slice(-4)}`;
}

function display(value: unknown, secret: boolean): string {
  if (value === undefined) return '(not set)';
  if (secret) return masked(String(value));
  return String(value);
}

/** `mada config`: the effective settings and where each comes from; `--init` writes the default file. */
export function configCommand(flags: ConfigFlags, terminal: Terminal): number {
  if (flags.init) {
    const path = configFilePath();
    writeDefaultConfig(path, flags.force ?? false);
    terminal.print(`Wrote ${path}`);
    return EXIT_OK;
  }
  const { values, sources, file } = resolveSettings();
  const entries = SETTING_NAMES.map((name) => {
    const spec = SETTING_KEYS[name];
    return { key: spec.key, value: display(values[name], spec.secret ?? false), source: describeSource(sources[name]) };
  });
  if (flags.json) {
    const settings = Object.fromEntries(entries.map(({ key, value, source }) => [key, { value, source }]));
    terminal.printJson({ file: file.path, file_found: file.found, settings });
    return EXIT_OK;
  }
  const state = file.found ? '' : terminal.style('dim', ' (not found; `mada config --init` writes one)');
  terminal.print(`Config file: ${tildify(file.path)}${state}`);
  const keyWidth = Math.max(...entries.map((entry) => entry.key.length));
  const valueWidth = Math.max(...entries.map((entry) => entry.value.length));
  for (const { key, value, source } of entries) {
    terminal.print(`  ${key.padEnd(keyWidth)}  ${value.padEnd(valueWidth)}  ${terminal.style('dim', source)}`);
  }
  return EXIT_OK;
}
