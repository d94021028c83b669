import { text } from 'node:stream/consumers';
import { describe, expect, it } from 'vitest';
import type { ConversationResponse } from '@mada/protocol';
import type { OutgoingMessage } from '../../src/conversations/service.js';
import { streamedDetail, streamedPage } from '../../src/http/streamed-detail.js';

/** Contents whose escapes JSON.stringify writes, and some it leaves alone. */
const CONTENTS = [
  'plain text, nothing to escape',
  'a "quoted" word and a back\\slash',
  'control characters: \u0000 \u0007 \b \t \n \f \r \u001f, and DEL \u007f',
  'line and paragraph separators: \u2028 \u2029',
  'astral: 😀 𝄞, and a lone high \ud800 and low \udc00 surrogate',
  '',
];

/** MessageResponses in their schema's field order. */
const messages = CONTENTS.map((content, i) => ({
  id: `m${i}`,
  role: 'user',
  content,
  token_count: 3,
  is_summary: false,
  created_at: '2026-11-28T00:00:00.000Z',
}));

async function* slices(content: string, size: number): AsyncGenerator<string> {
  // Cut on whole characters, as the repository's slices are.
  const characters = [...content];
  for (let i = 0; i < characters.length; i += size) yield characters.slice(i, i + size).join('');
}

const outgoing = (sliced: boolean): OutgoingMessage[] =>
  messages.map(({ content, ...fields }) => ({ fields, content: sliced ? slices(content, 3) : content }));

describe('message bodies written as they are read', () => {
  it.each([false, true])('are the bytes JSON.stringify gives for every content (in slices: %s)', async (sliced) => {
    const head = { id: 'c1', title: 'escapes' } as unknown as ConversationResponse;
    const detail = await text(
      streamedDetail(
        head,
        (async function* () {
          yield outgoing(sliced);
        })(),
      ),
    );
    expect(detail).toBe(JSON.stringify({ ...head, messages }));
    expect(await text(streamedPage(outgoing(sliced), true))).toBe(JSON.stringify({ messages, has_more: true }));
  });
});
