import { countTokens as countCl100k } from 'gpt-tokenizer/encoding/cl100k_base';

/** User text is data: `<|endoftext|>` in a message is counted as plain text, never refused. */
const PLAIN_TEXT = { allowedSpecial: new Set<string>(), disallowedSpecial: new Set<string>() };

/** Tokens of `text` with cl100k_base (docs/api.md, "Token counting"); the empty string counts 0. */
export function countTokens(text: string): number {
  return text === '' ? 0 : countCl100k(text, PLAIN_TEXT);
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
