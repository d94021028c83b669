import { countTokens as countCl100k } from 'gpt-tokenizer/encoding/cl100k_base';

/** User text is data: `<|endoftext|>` in a message is counted as plain text, never refused. */
const PLAIN_TEXT = { allowedSpecial: new Set<string>(), disallowedSpecial: new Set<string>() };

/** Pieces of ordinary text are about this long: short enough to keep each tokenizer call cheap. */
const PIECE = 4096;
/**
 * The longest stretch without a word boundary counted in one piece. The tokenizer's merging
 * takes time quadratic in the length of one word: 256 KB of `x` (or of `{`) took it 30 seconds,
 * and a model's answer, a tool result or a message can be such a word.
 */
const LONGEST_WORD = 256;
const SPACE = 0x20;

/**
 * Tokens of `text` with cl100k_base (docs/api.md, "Token counting"); the empty string counts 0.
 * Counted piece by piece, each cut before a space that follows a non-space: no token of
 * cl100k_base reaches across such a cut, so the sum is the count of the whole. Only a stretch of
 * more than LONGEST_WORD characters without such a space is cut where it stands, which may count
 * a token or two more than the whole would.
 */
export function countTokens(text: string): number {
  if (text === '') return 0;
  if (text.length <= LONGEST_WORD) return countCl100k(text, PLAIN_TEXT);
  let total = 0;
  let start = 0;
  let boundary = 0;
  for (let i = 1; i < text.length; i++) {
    if (text.charCodeAt(i) === SPACE && text.charCodeAt(i - 1) !== SPACE && !/\s/.test(text[i - 1]!)) boundary = i;
    if (i - Math.max(start, boundary) >= LONGEST_WORD) {
      total += countCl100k(text.slice(start, i), PLAIN_TEXT);
      start = boundary = i;
    } else if (i - start >= PIECE && boundary > start) {
      total += countCl100k(text.slice(start, boundary), PLAIN_TEXT);
      start = boundary;
    }
  }
  return total + countCl100k(text.slice(start), PLAIN_TEXT);
}

/** The cheap estimate: length divided by 4, rounded down. */
export function estimateTokens(text: string): number {
  return Math.floor(text.length / 4);
}

/** Per-message framing overhead and the reply primer, as OpenAI's chat format counts them. */
export const TOKENS_PER_MESSAGE = 3;
export const TOKENS_PER_REPLY = 3;

/** Tokens of a message list: contents plus 3 per message plus 3. */
export function countMessageListTokens(messages: readonly { content: string }[]): number {
  return messages.reduce((sum, message) => sum + countTokens(message.content) + TOKENS_PER_MESSAGE, TOKENS_PER_REPLY);
}
