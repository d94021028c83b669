import { PERMISSION_MODES, type PermissionMode } from '@mada/protocol';

export type ChatInput =
  | { kind: 'empty' }
  | { kind: 'exit' }
  | { kind: 'clear' }
  | { kind: 'help' }
  | { kind: 'mode'; mode: PermissionMode | undefined; given?: string }
  | { kind: 'model'; name: string | undefined }
  | { kind: 'cd'; path: string }
  | { kind: 'diff' }
  | { kind: 'undo'; force: boolean }
  | { kind: 'prompt'; text: string };

/** The words the chat reacts to itself; everything else goes to the agent. */
export const CHAT_COMMANDS = ['exit', 'quit', 'clear', 'help', 'mode', 'model', 'cd'] as const;

const unquote = (text: string): string => text.replace(/^(["'])(.*)\1$/, '$2');

export function parseInput(line: string): ChatInput {
  const text = line.trim();
  if (text === '') return { kind: 'empty' };
  const [word = '', ...rest] = text.split(/\s+/);
  const command = word.toLowerCase();
  if ((command === 'exit' || command === 'quit') && rest.length === 0) return { kind: 'exit' };
  if ((command === 'clear' || command === 'help') && rest.length === 0) return { kind: command };
  if (command === 'mode' && rest.length <= 1) {
    const given = rest[0];
    if (given === undefined) return { kind: 'mode', mode: undefined };
    return { kind: 'mode', mode: PERMISSION_MODES.find((mode) => mode === given.toLowerCase()), given };
  }
  // `/model` too, as other agents' chats spell it.
  if ((command === 'model' || command === '/model') && rest.length <= 1) return { kind: 'model', name: rest[0] };
  if (command === '/diff' && rest.length === 0) return { kind: 'diff' };
  if (command === '/undo' && (rest.length === 0 || (rest.length === 1 && rest[0] === '--force'))) return { kind: 'undo', force: rest.length === 1 };
  if (command === 'cd') return { kind: 'cd', path: unquote(text.slice(2).trim()) };
  return { kind: 'prompt', text };
}
