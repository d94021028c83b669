/**
 * Reasoning that local models write into their answer text. It is never part of the answer: not
 * stored, not streamed, not searched for tool calls (a model thinking aloud about a call it might
 * make has not made it).
 */
export const THINK_BLOCKS: readonly { open: string; close: string }[] = [
  { open: '<think>', close: '</think>' },
  { open: '<thinking>', close: '</thinking>' },
  // gpt-oss (harmony) writes its reasoning on the analysis channel.
  { open: '<|channel|>analysis<|message|>', close: '<|end|>' },
];

/** Index just past the whitespace starting at `at`. */
export function skipWhitespace(text: string, at: number): number {
  let i = at;
  while (i < text.length && /\s/.test(text[i]!)) i++;
  return i;
}

/**
 * The first reasoning opening at or after a position, for positions that only move forward. Each
 * kind's next occurrence is searched for again only once the position has passed it, so a text
 * of many short blocks costs one pass per kind, not one per block.
 */
class Openings {
  private readonly next: number[] = THINK_BLOCKS.map(() => -2);

  constructor(private readonly text: string) {}

  first(from: number): { at: number; close: string; openLength: number } | undefined {
    let best: { at: number; close: string; openLength: number } | undefined;
    THINK_BLOCKS.forEach((block, i) => {
      let at = this.next[i]!;
      if (at === -2 || (at >= 0 && at < from)) this.next[i] = at = this.text.indexOf(block.open, from);
      if (at >= 0 && (best === undefined || at < best.at)) best = { at, close: block.close, openLength: block.open.length };
    });
    return best;
  }
}

/**
 * The text without reasoning blocks (an unclosed one runs to the end) and the whitespace after
 * each. A closing `</think>` with no opening (the chat template opened it in the prompt) drops
 * everything before it.
 */
export function stripThinking(text: string): string {
  let from = 0;
  const orphan = text.indexOf('</think>');
  if (orphan >= 0 && text.lastIndexOf('<think>', orphan) < 0) from = skipWhitespace(text, orphan + '</think>'.length);
  const openings = new Openings(text);
  let out = '';
  for (;;) {
    const opening = openings.first(from);
    if (opening === undefined) return out + text.slice(from);
    out += text.slice(from, opening.at);
    const close = text.indexOf(opening.close, opening.at + opening.openLength);
    if (close < 0) return out;
    from = skipWhitespace(text, close + opening.close.length);
  }
}
