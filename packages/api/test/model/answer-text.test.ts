import { describe, expect, it } from 'vitest';
import { AnswerText } from '../../src/model/answer-text.js';

/** Tokens of one to seven characters, some of them halves of a character outside the BMP. */
function tokens(count: number): string[] {
  const out: string[] = [];
  for (let i = 0; i < count; i++) {
    const word = `w${i % 97}ü`.slice(0, 1 + (i % 7));
    out.push(i % 11 === 0 ? '\uD83D' : i % 11 === 1 ? '\uDE00' : word);
  }
  return out;
}

describe('AnswerText', () => {
  it('gives back every token in order across many flat blocks', () => {
    // Several times the tokens of one block, and not a whole number of blocks.
    const parts = tokens(9_001);
    const text = new AnswerText();
    for (const part of parts) text.add(part);
    expect(text.toString()).toBe(parts.join(''));
    expect(text.toString()).toBe(parts.join(''));
  });

  it('keeps what comes after a read, and is empty before any token', () => {
    const text = new AnswerText();
    expect(text.toString()).toBe('');
    const first = tokens(3_000);
    for (const part of first) text.add(part);
    expect(text.toString()).toBe(first.join(''));
    const more = tokens(2_500).reverse();
    for (const part of more) text.add(part);
    expect(text.toString()).toBe(first.join('') + more.join(''));
  });
});
