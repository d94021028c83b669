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
});
