import { describe, expect, it } from 'vitest';
import { titleFromContent } from '../../src/conversations/title.js';

describe('conversation titles', () => {
  it('keeps content of up to 100 characters as it is', () => {
    expect(titleFromContent('a'.repeat(100))).toBe('a'.repeat(100));
  });

  it('cuts longer content at 100 characters and adds ...', () => {
    expect(titleFromContent('b'.repeat(101))).toBe(`${'b'.repeat(100)}...`);
  });

  it('counts code points, so emoji and accents are never split', () => {
    const emoji = '🙂'.repeat(120);
    expect(titleFromContent(emoji)).toBe(`${'🙂'.repeat(100)}...`);
    expect(titleFromContent('é'.repeat(100))).toBe('é'.repeat(100));
  });
});
