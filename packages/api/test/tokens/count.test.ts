import { countTokens as wholeCount } from 'gpt-tokenizer/encoding/cl100k_base';
import { describe, expect, it } from 'vitest';
import { countMessageListTokens, countTokens, estimateTokens } from '../../src/tokens/count.js';

describe('token counting', () => {
  it('counts with cl100k_base', () => {
    expect(countTokens('hello world')).toBe(2);
    expect(countTokens('The quick brown fox jumps over the lazy dog.')).toBe(10);
  });

  it('counts the empty string as 0', () => {
    expect(countTokens('')).toBe(0);
  });

  it('treats special-token text in user content as plain text instead of failing', () => {
    expect(countTokens('a <|endoftext|> b')).toBeGreaterThan(3);
  });

  it('estimates as length divided by 4, rounded down', () => {
    expect(estimateTokens('')).toBe(0);
    expect(estimateTokens('abc')).toBe(0);
    expect(estimateTokens('abcdefghi')).toBe(2);
  });

  it('adds 3 tokens per message plus 3 to a message list', () => {
    expect(countMessageListTokens([])).toBe(3);
    expect(countMessageListTokens([{ content: 'hello world' }, { content: '' }])).toBe(2 + 3 + 0 + 3 + 3);
  });

  it('counts long ordinary text exactly as the tokenizer counts it whole', () => {
    const paragraph = "The handler's loop reads 1,234 rows\n  - then   writes {\"a\": [1, 2]} to `out.txt`;\tdon't stop.\r\n\n";
    const text = Array.from({ length: 400 }, (_, i) => `${paragraph.slice(i % 7)}${'word'.repeat(i % 5)} `).join('');
    expect(text.length).toBeGreaterThan(20_000);
    expect(countTokens(text)).toBe(wholeCount(text, { allowedSpecial: new Set(), disallowedSpecial: new Set() }));
  });

  // The tokenizer's merging is quadratic in one word's length: this took half a minute whole.
  it('counts a quarter megabyte without a space, close to the whole count', () => {
    const word = 'x'.repeat(256 * 1024);
    const count = countTokens(word);
    expect(count).toBeGreaterThan(256 * 1024 / 16);
    expect(count).toBeLessThan(256 * 1024 / 4);
    expect(countTokens('{'.repeat(256 * 1024))).toBeGreaterThan(0);
  });
});
