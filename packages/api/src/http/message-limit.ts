import { countTokens } from '../tokens/count.js';
import { TooLargeError } from '../errors.js';

/** Longer texts are counted in pieces of about this many characters. */
const PIECE_CHARS = 4096;

/** Where to cut `text` near `end`: after the last whitespace before it, never inside a surrogate pair. */
function cutPoint(text: string, start: number, end: number): number {
  if (end >= text.length) return text.length;
  for (let at = end; at > start + PIECE_CHARS / 2; at--) if (/\s/.test(text[at - 1]!)) return at;
  const code = text.charCodeAt(end - 1);
  return code >= 0xd800 && code <= 0xdbff ? end - 1 : end;
}

/**
 * Tokens of a client's message. The tokenizer's cost grows faster than linearly on one long run
 * without spaces, so a long text is counted in whitespace-bounded pieces: the same count for
 * ordinary text, within a few tokens for the rest, and a bounded cost for any body the size
 * limit lets in. A text of fewer UTF-8 bytes than the limit cannot exceed it (every token is at
 * least one byte) and is not counted here at all.
 */
export function messageTokens(text: string): number {
  if (text.length <= PIECE_CHARS) return countTokens(text);
  let total = 0;
  for (let start = 0; start < text.length; ) {
    const end = cutPoint(text, start, start + PIECE_CHARS);
    total += countTokens(text.slice(start, end));
    start = end;
  }
  return total;
}

/** Throws TooLargeError (`Message too large: <n> tokens (max <m>)`) for a message over `max` tokens. */
export function assertMessageFits(text: string, max: number): void {
  if (Buffer.byteLength(text, 'utf8') <= max) return;
  const tokens = messageTokens(text);
  if (tokens > max) throw new TooLargeError(`Message too large: ${tokens} tokens (max ${max})`);
}
