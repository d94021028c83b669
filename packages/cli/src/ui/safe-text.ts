import { isControlCode as isControl, visibleControl } from '@mada/protocol';

/**
 * Text from the service (answers that echo files, tool arguments, error details, titles) made
 * inert before it reaches the terminal. A terminal obeys escape sequences wherever they appear:
 * they can rewrite lines already shown, write the clipboard (OSC 52), set the window title, or
 * ask the terminal a question whose answer arrives as typed input. Only the client's own
 * styling may reach the terminal as sequences.
 */

const ESC = 0x1b;
const BEL = 0x07;
const ST = 0x9c;
const CSI = 0x9b;
/** What follows ESC to open a control string: OSC `]`, DCS `P`, SOS `X`, PM `^`, APC `_`. */
const STRING_AFTER_ESC = new Set([']', 'P', 'X', '^', '_']);
/** The same control strings opened by their 8-bit C1 introducer. */
const STRING_C1 = new Set([0x9d, 0x90, 0x98, 0x9e, 0x9f]);

const between = (code: number, low: number, high: number): boolean => code >= low && code <= high;

/** An escape sequence found in the text: where it ends, and whether it only sets colours. */
interface Sequence {
  end: number;
  styling: boolean;
}

/** A control string runs to BEL or ST; an ESC that does not start ST cancels it, as terminals do. */
function controlStringEnd(text: string, from: number): number | undefined {
  for (let index = from; index < text.length; index++) {
    const code = text.charCodeAt(index);
    if (code === BEL || code === ST) return index + 1;
    if (code === ESC) return text[index + 1] === '\\' ? index + 2 : index;
  }
  return undefined;
}

/** CSI: parameter bytes, intermediate bytes, one final byte (ECMA-48 section 5.4). */
function csi(text: string, from: number, sevenBit: boolean): Sequence | undefined {
  let index = from;
  while (index < text.length && between(text.charCodeAt(index), 0x30, 0x3f)) index++;
  const parametersEnd = index;
  while (index < text.length && between(text.charCodeAt(index), 0x20, 0x2f)) index++;
  if (index >= text.length || !between(text.charCodeAt(index), 0x40, 0x7e)) return undefined;
  // Select Graphic Rendition with plain numeric parameters: colour, bold, dim and their resets.
  const styling = sevenBit && text[index] === 'm' && parametersEnd === index && /^[0-9;:]*$/.test(text.slice(from, index));
  return { end: index + 1, styling };
}

/** The escape sequence that starts at `index`, if a complete one does. */
function sequenceAt(text: string, index: number): Sequence | undefined {
  const code = text.charCodeAt(index);
  if (code === CSI) return csi(text, index + 1, false);
  if (STRING_C1.has(code)) {
    const end = controlStringEnd(text, index + 1);
    return end === undefined ? undefined : { end, styling: false };
  }
  if (code !== ESC || index + 1 >= text.length) return undefined;
  const next = text[index + 1]!;
  if (next === '[') return csi(text, index + 2, true);
  if (STRING_AFTER_ESC.has(next)) {
    const end = controlStringEnd(text, index + 2);
    return end === undefined ? undefined : { end, styling: false };
  }
  // Any other escape (ESC 7, ESC c, ESC ( 0, ESC # 8): intermediate bytes, then one final byte.
  let end = index + 1;
  while (end < text.length && between(text.charCodeAt(end), 0x20, 0x2f)) end++;
  return end < text.length && between(text.charCodeAt(end), 0x30, 0x7e) ? { end: end + 1, styling: false } : undefined;
}

/**
 * Escape sequences removed (colour ones kept when `keepStyling`), controls left over shown.
 * A sequence that is not complete is not obeyed either: its introducer is shown as a control.
 */
function neutralize(text: string, keepStyling: boolean): string {
  let out = '';
  let index = 0;
  while (index < text.length) {
    const code = text.charCodeAt(index);
    if (!isControl(code)) {
      out += text[index];
      index++;
      continue;
    }
    const sequence = sequenceAt(text, index);
    if (sequence) {
      if (keepStyling && sequence.styling) out += text.slice(index, sequence.end);
      index = sequence.end;
    } else {
      out += visibleControl(text[index]!);
      index++;
    }
  }
  return out;
}

/**
 * Service text for display: every escape sequence removed (colour included: the client styles
 * text itself), CRLF read as a line end, and the controls left over shown as pictures. Newlines,
 * tabs and every printable character (any script, emoji) stay as they are.
 */
export function safeText(text: string): string {
  return neutralize(text.replaceAll('\r\n', '\n'), false);
}

/**
 * The last guard on a line the client writes: its own colours pass, every other sequence is
 * removed and stray controls are shown, so text that reached a line unsanitized still cannot
 * move the cursor, write the clipboard or query the terminal.
 */
export function safeOutput(line: string): string {
  return neutralize(line, true);
}

/** What the user is asked to approve, exactly (shared with the browser console). */
export { exactText } from '@mada/protocol';

/**
 * A value as JSON for scripts: exact data, with DEL, C1 controls and invisible format characters
 * written as \u escapes (JSON.stringify already does so for C0), so printing it to a terminal is
 * safe and parsing it gives back the same strings.
 */
export function safeJson(value: unknown, indent = 2): string {
  // Per UTF-16 unit: a tag character beyond the BMP is written as its surrogate pair.
  const escape = (char: string): string =>
    Array.from({ length: char.length }, (_, unit) => `\\u${char.charCodeAt(unit).toString(16).padStart(4, '0')}`).join('');
  return JSON.stringify(value, null, indent).replace(/[\u007f-\u009f\p{Cf}\p{Zl}\p{Zp}]/gu, escape);
}
