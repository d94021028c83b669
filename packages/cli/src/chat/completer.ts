import { readdirSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { PERMISSION_MODES } from '@mada/protocol';
import { expandHome } from '../config/home.js';
import { CHAT_COMMANDS } from './inputs.js';

export type Completion = [string[], string];

/** Directories that complete `fragment` (as typed: relative, absolute or `~/`), with a trailing `/`. */
function directoryCompletions(fragment: string, cwd: string): string[] {
  const slash = fragment.lastIndexOf('/');
  const typedDir = slash >= 0 ? fragment.slice(0, slash + 1) : '';
  const prefix = fragment.slice(slash + 1);
  const searchDir = resolve(cwd, expandHome(typedDir === '' ? '.' : typedDir));
  let names: string[];
  try {
    names = readdirSync(searchDir, { withFileTypes: true })
      .filter((entry) => entry.isDirectory() || (entry.isSymbolicLink() && isDirectory(join(searchDir, entry.name))))
      .map((entry) => entry.name);
  } catch {
    return [];
  }
  // Hidden directories only when asked for, as shells do.
  const visible = names.filter((name) => name.startsWith(prefix) && (prefix.startsWith('.') || !name.startsWith('.')));
  return visible.sort().map((name) => `${typedDir}${name}/`);
}

function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

/**
 * readline's completer: chat commands at the start of a line, modes after `mode `, and
 * directories after `cd ` (relative to the chat's current directory).
 */
export function createCompleter(currentDir: () => string): (line: string) => Completion {
  return (line) => {
    const cd = /^cd\s+(.*)$/.exec(line);
    if (cd) {
      const fragment = cd[1] ?? '';
      return [directoryCompletions(fragment, currentDir()), fragment];
    }
    const mode = /^mode\s+(\S*)$/.exec(line);
    if (mode) {
      const fragment = mode[1] ?? '';
      return [PERMISSION_MODES.filter((m) => m.startsWith(fragment)), fragment];
    }
    if (/\s/.test(line)) return [[], line];
    const words = CHAT_COMMANDS.filter((word) => word.startsWith(line)).map((word) => (word === 'mode' || word === 'cd' ? `${word} ` : word));
    return [words, line];
  };
}
