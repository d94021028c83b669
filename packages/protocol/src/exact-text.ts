import { isInvisibleCharacter } from './invisible-text.js';

/*
 * What a person is asked to approve, shown exactly, for every client (the terminal and the
 * browser console): nothing removed, every control drawn, every invisible or reordering character
 * named, so two commands that differ never look the same and what is approved is what runs.
 * No dependency here (no zod): the console bundles this file on its own.
 */

const between = (code: number, low: number, high: number): boolean => code >= low && code <= high;

/** C0 controls but tab and newline, DEL, and C1 controls. */
export const isControlCode = (code: number): boolean => (code < 0x20 && code !== 0x09 && code !== 0x0a) || between(code, 0x7f, 0x9f);

/** `<U+202E>`: a code point named, so it can be seen and looked up. */
export const codePointName = (char: string): string => `<U+${(char.codePointAt(0) ?? 0).toString(16).toUpperCase().padStart(4, '0')}>`;

/** A C0 control as its Unicode control picture (ESC as ␛, CR as ␍), DEL as ␡, C1 by code point. */
export function visibleControl(char: string): string {
  const code = char.charCodeAt(0);
  if (code < 0x20) return String.fromCharCode(0x2400 + code);
  if (code === 0x7f) return '\u2421';
  return codePointName(char);
}

/**
 * Text exactly: an escape sequence reads `␛[2K`, and invisible or reordering characters are named
 * (`<U+202E>`). Newlines and tabs stay.
 */
export function exactText(text: string): string {
  let out = '';
  for (const char of text) {
    if (isControlCode(char.charCodeAt(0))) out += visibleControl(char);
    else if (isInvisibleCharacter(char)) out += codePointName(char);
    else out += char;
  }
  return out;
}

/**
 * The tool and its arguments as one readable line, exactly: controls and invisible characters are
 * shown, never obeyed, so a command cannot pass for another one on screen.
 */
export function describeCall(call: { tool: string; args: Record<string, unknown> }): string {
  const command = call.args.command;
  if (typeof command === 'string') return exactText(`${call.tool}: ${command}`);
  return exactText(`${call.tool} ${JSON.stringify(call.args)}`);
}
