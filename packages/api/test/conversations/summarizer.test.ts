import { describe, expect, it } from 'vitest';
import { fallbackSummary, needsSummary, summaryInputLines } from '../../src/conversations/summarizer.js';
import type { MessageRecord } from '../../src/db/repository.js';

const msg = (role: string, content: string) => ({ role, content }) as MessageRecord;
const policy = { maxContextTokens: 1000, summarizationThreshold: 0.8, keepRecentMessages: 6 };

describe('summarization condition', () => {
  it('needs tokens strictly above the threshold', () => {
    expect(needsSummary(800, 10, policy, 64_000)).toBe(false);
    expect(needsSummary(801, 10, policy, 64_000)).toBe(true);
  });

  it("takes the turn's model window when MAX_CONTEXT_TOKENS is not set", () => {
    const fromModel = { ...policy, maxContextTokens: null };
    expect(needsSummary(3000, 10, fromModel, 4096)).toBe(false);
    expect(needsSummary(3300, 10, fromModel, 4096)).toBe(true);
    expect(needsSummary(3300, 10, fromModel, 32_768)).toBe(false);
  });

  it('needs more than keep_recent + 1 non-summary messages', () => {
    expect(needsSummary(5000, 7, policy, 64_000)).toBe(false);
    expect(needsSummary(5000, 8, policy, 64_000)).toBe(true);
  });
});

describe('summary input', () => {
  it('shows the previous summary first, then ROLE: content lines', () => {
    expect(summaryInputLines(msg('summary', 'old'), [msg('user', 'a'), msg('assistant', 'b')])).toEqual([
      '[Previous Summary]: old',
      'USER: a',
      'ASSISTANT: b',
    ]);
  });
});

describe('fallback summary', () => {
  it('keeps 4 or fewer lines as they are', () => {
    expect(fallbackSummary(['USER: a', 'ASSISTANT: b', 'USER: c', 'ASSISTANT: d'])).toBe('USER: a\nASSISTANT: b\nUSER: c\nASSISTANT: d');
  });

  it('keeps the first two and last two of more, noting how many were omitted', () => {
    expect(fallbackSummary(['1', '2', '3', '4', '5', '6', '7'])).toBe('1\n2\n[... 3 messages omitted ...]\n6\n7');
    expect(fallbackSummary(['1', '2', '3', '4', '5'])).toBe('1\n2\n[... 1 message omitted ...]\n4\n5');
  });
});
