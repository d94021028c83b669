import { setImmediate as nextTurn } from 'node:timers/promises';
import { countTokens } from '../tokens/count.js';
import { TooLargeError } from '../errors.js';

/** Longer texts are counted in pieces of about this many characters. */
const PIECE_CHARS = 4096;
/**
 * Pieces counted in one go before other work gets the event loop: about 256 KB, a few
 * milliseconds. A message of the largest body the service takes (2 MB) cost about 70 ms at once.
 */
const PIECES_PER_TURN = 64;

/** Where to cut `text` near `end`: after the last whitespace before it, never inside a surrogate pair. */
function cutPoint(text: string, start: number, end: number): number {
  if (end >= text.length) return text.length;
  for (let at = end; at > start + PIECE_CHARS / 2; at--) if (/\s/.test(text[at - 1]!)) return at;
  const code = text.charCodeAt(end - 1);
  return code >= 0xd800 && code <= 0xdbff ? end - 1 : end;
}

/**
 * Tokens of a client's message. The tokenizer's cost grows faster than linearly on one long run
 * without spaces, so a long text is counted in whitespace-bounded pieces: within a fraction of a
 * percent of the whole text's count, and a bounded cost for any body the size limit lets in.
 * Between groups of pieces the count lets other requests run. A text of fewer
 * UTF-8 bytes than the limit cannot exceed it (every token is at least one byte) and is not
 * counted here at all.
 */
export async function messageTokens(text: string): Promise<number> {
  if (text.length <= PIECE_CHARS) return countTokens(text);
  let total = 0;
  for (let start = 0, pieces = 1; start < text.length; pieces++) {
    if (pieces % PIECES_PER_TURN === 0) await nextTurn();
    const end = cutPoint(text, start, start + PIECE_CHARS);
    total += countTokens(text.slice(start, end));
    start = end;
  }
  return total;
}

/** How large one message a client sends may be (MAX_MESSAGE_TOKENS, MAX_MESSAGE_BYTES). */
export interface MessageLimits {
  tokens: number;
  /** UTF-8 bytes: a long run of whitespace is a few tokens but megabytes, and every later read of the conversation carries it. */
  bytes: number;
}

/**
 * Throws TooLargeError for a message over either limit: `Message too large: <n> bytes (max <m>)`,
 * checked first as it costs one pass, else `Message too large: <n> tokens (max <m>)`.
 */
export async function assertMessageFits(text: string, limits: MessageLimits): Promise<void> {
  const bytes = Buffer.byteLength(text, 'utf8');
  if (bytes > limits.bytes) throw new TooLargeError(`Message too large: ${bytes} bytes (max ${limits.bytes})`);
  if (bytes <= limits.tokens) return;
  const tokens = await messageTokens(text);
  if (tokens > limits.tokens) throw new TooLargeError(`Message too large: ${tokens} tokens (max ${limits.tokens})`);
}
