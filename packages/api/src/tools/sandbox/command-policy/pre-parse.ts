import { isInvisibleCharacter } from '@mada/protocol';
import { refuse } from './refusal.js';
import type { ShellToolName } from './plan.js';

export const MAX_COMMAND_BYTES = 8 * 1024;

/** C0 controls except tab and newline, DEL, and the C1 block. */
const isControl = (code: number): boolean => (code <= 0x1f && code !== 0x09 && code !== 0x0a) || (code >= 0x7f && code <= 0x9f);

function findCharacter(text: string, test: (char: string, code: number) => boolean): string | undefined {
  for (const char of text) if (test(char, char.codePointAt(0) ?? 0)) return char;
  return undefined;
}

const describe = (char: string): string => `U+${(char.codePointAt(0) ?? 0).toString(16).toUpperCase().padStart(4, '0')}`;

/**
 * Checks on the raw text before any parser sees it: these are the characters that made parsers
 * and humans disagree in past bypasses. Returns the command with surrounding whitespace removed.
 */
export function checkCommandText(command: string, tool: ShellToolName): string {
  if (Buffer.byteLength(command, 'utf8') > MAX_COMMAND_BYTES) refuse(`the command is longer than ${MAX_COMMAND_BYTES / 1024} KiB`);
  const control = findCharacter(command, (_char, code) => isControl(code));
  if (control !== undefined) refuse(`control character ${describe(control)} in the command`);
  const invisible = findCharacter(command, isInvisibleCharacter);
  if (invisible !== undefined) refuse(`invisible or bidirectional Unicode character ${describe(invisible)} in the command`);
  if (/\\\r?\n/.test(command)) refuse('backslash-newline line continuation');
  const trimmed = command.trim();
  if (trimmed === '') refuse('the command is empty');
  if (tool === 'bash_readonly' && trimmed.includes('\n')) {
    refuse('bash_readonly runs one command or a | pipeline; newlines are not allowed');
  }
  return trimmed;
}
