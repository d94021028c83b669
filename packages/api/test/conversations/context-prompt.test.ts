import { describe, expect, it } from 'vitest';
import { buildContextPrompt } from '../../src/conversations/context-prompt.js';
import type { MessageRecord } from '../../src/db/repository.js';

const msg = (role: string, content: string): MessageRecord => ({
  id: 'x',
  conversationId: 'c',
  seq: 1,
  role,
  content,
  tokenCount: 0,
  isSummary: role === 'summary',
  summarizesUpTo: null,
  createdAt: new Date(0),
});

describe('context prompt', () => {
  it('is only the current request when there is no history', () => {
    expect(buildContextPrompt(undefined, [], 'Fix the bug')).toBe('<current_request>\nFix the bug\n</current_request>');
  });

  it('lists recent messages with upper-case roles before the request', () => {
    expect(buildContextPrompt(undefined, [msg('user', 'hi'), msg('assistant', 'hello\nthere')], 'next')).toBe(
      '<recent_conversation>\nUSER: hi\nASSISTANT: hello\nthere\n</recent_conversation>\n\n<current_request>\nnext\n</current_request>',
    );
  });

  it('starts with the summary when there is one', () => {
    expect(buildContextPrompt(msg('summary', 'We fixed src/a.ts'), [msg('user', 'q')], 'r')).toBe(
      '<conversation_summary>\nWe fixed src/a.ts\n</conversation_summary>\n\n<recent_conversation>\nUSER: q\n</recent_conversation>\n\n<current_request>\nr\n</current_request>',
    );
  });
});
