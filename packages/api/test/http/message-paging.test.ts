import { randomUUID } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DIALECTS } from '../support/databases.js';
import { createTestApp, type TestApp } from '../support/app.js';

const ALICE = { 'x-api-key': 'alice-key-0123456789' };
const BOB = { 'x-api-key': 'bob-key-0123456789' };
const KEYS = { API_KEYS: 'alice:alice-key-0123456789,bob:bob-key-0123456789' };

interface Message {
  id: string;
  role: string;
  content: string;
}

describe.each(DIALECTS)('reading long conversations over HTTP on %s', (dialect) => {
  let t: TestApp;
  let base: string;

  beforeEach(async () => {
    t = await createTestApp({ dialect, env: KEYS });
    base = await t.app.listen({ port: 0, host: '127.0.0.1' });
  });
  afterEach(async () => t.close());

  const get = (path: string, headers: Record<string, string> = ALICE) => fetch(`${base}${path}`, { headers });

  /** A conversation of alice's holding `contents` as alternating user and assistant messages. */
  const conversationWith = async (contents: string[]): Promise<string> => {
    const created = await fetch(`${base}/conversations/`, { method: 'POST', headers: { ...ALICE, 'content-type': 'application/json' }, body: '{}' });
    const { id } = (await created.json()) as { id: string };
    const batch = contents.map((content, i) => ({ id: randomUUID(), role: i % 2 ? 'assistant' : 'user', content, tokenCount: 1 }));
    for (let i = 0; i < batch.length; i += 100) {
      await t.database.repository.appendMessages(id, batch.slice(i, i + 100), { now: new Date(), titleIfUnset: null });
    }
    return id;
  };
  const numbered = (n: number) => Array.from({ length: n }, (_, i) => `message ${i + 1}`);
  const page = async (path: string) => {
    const response = await get(path);
    expect(response.status).toBe(200);
    return (await response.json()) as { messages: Message[]; has_more: boolean };
  };

  it('sends the whole detail in order, as compact JSON, across pages of huge and small messages', async () => {
    const huge = 'x'.repeat(700_000);
    const contents = [...numbered(150), huge, 'é😀\u2028 "quoted" \\ end', huge, huge, ...numbered(3)];
    const id = await conversationWith(contents);
    const response = await get(`/conversations/${id}`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('application/json; charset=utf-8');
    const text = await response.text();
    const body = JSON.parse(text) as { id: string; messages: Message[]; total_tokens: number };
    expect(text).toBe(JSON.stringify(body));
    expect(Object.keys(body)).toEqual(['id', 'agent_type', 'title', 'working_dir', 'model', 'total_tokens', 'created_at', 'updated_at', 'messages']);
    expect(body.id).toBe(id);
    expect(body.total_tokens).toBe(contents.length);
    expect(body.messages.map((message) => message.content)).toEqual(contents);
    expect(Object.keys(body.messages[0]!)).toEqual(['id', 'role', 'content', 'token_count', 'is_summary', 'created_at']);
  });

  it('sends messages larger than a page whole, characters of every UTF-8 length across the slices they are read in', async () => {
    // 2, 3 and 4 bytes a character, none a multiple of the slices' size: slices end inside them unless cut with care.
    const large = ['é😀€ "\\\n'.repeat(100_000), `${'x'.repeat(3_000_001)}😀`, ' \n'.repeat(700_000)];
    const contents = ['first', large[0]!, 'between', large[1]!, large[2]!, 'last'];
    const id = await conversationWith(contents);
    const response = await get(`/conversations/${id}`);
    const text = await response.text();
    const body = JSON.parse(text) as { messages: Message[] };
    expect(text).toBe(JSON.stringify(body));
    expect(body.messages.map((message) => message.content)).toEqual(contents);
    expect(Object.keys(body.messages[1]!)).toEqual(['id', 'role', 'content', 'token_count', 'is_summary', 'created_at']);

    // A large message fills a page on its own: the page before 'last' is that message alone.
    const latest = await page(`/conversations/${id}/messages?limit=2`);
    expect([latest.messages.map((message) => message.content), latest.has_more]).toEqual([['last'], true]);
    const alone = await (await get(`/conversations/${id}/messages?limit=2&before=${latest.messages[0]!.id}`)).text();
    expect(alone).toBe(JSON.stringify({ messages: [body.messages[4]], has_more: true }));
  });

  it('stops a page early when its contents pass a megabyte, and paging back still gives every message once', async () => {
    const sizes = [10, 400_000, 5, 300_000, 300_000, 300_000, 2_500_000, 7, 600_000, 600_000, 20, 1_100_000, 3, 3];
    const contents = sizes.map((size, i) => `${i}:`.padEnd(size, String.fromCharCode(97 + (i % 26))));
    const id = await conversationWith(contents);
    const seen: Message[] = [];
    const pages: string[][] = [];
    let current = await page(`/conversations/${id}/messages?limit=200`);
    for (;;) {
      pages.unshift(current.messages.map((message) => message.content));
      seen.unshift(...current.messages);
      if (!current.has_more) break;
      current = await page(`/conversations/${id}/messages?limit=200&before=${current.messages[0]!.id}`);
    }
    expect(seen.map((message) => message.content)).toEqual(contents);
    expect(new Set(seen.map((message) => message.id)).size).toBe(contents.length);
    for (const held of pages) {
      const bytes = held.reduce((sum, content) => sum + Buffer.byteLength(content), 0);
      // Within a megabyte, or one message that alone is larger.
      expect(bytes <= 1024 * 1024 || held.length === 1).toBe(true);
      expect(held.length).toBeGreaterThan(0);
    }
    // The newest page holds what fits, newest kept: 3, 3 and the 1.1 MB message are over a MiB together.
    expect(pages.at(-1)).toEqual(contents.slice(-2));
    expect(pages.length).toBeGreaterThan(5);
  });

  it('sends an empty conversation with an empty message list', async () => {
    const id = await conversationWith([]);
    expect(((await (await get(`/conversations/${id}`)).json()) as { messages: unknown[] }).messages).toEqual([]);
  });

  it('pages back from the latest messages, oldest first in each page, until nothing older is left', async () => {
    const id = await conversationWith(numbered(120));
    const latest = await page(`/conversations/${id}/messages`);
    expect(latest.messages.map((m) => m.content)).toEqual(numbered(120).slice(70));
    expect(latest.has_more).toBe(true);

    const seen = [...latest.messages];
    let current = latest;
    while (current.has_more) {
      current = await page(`/conversations/${id}/messages?limit=30&before=${current.messages[0]!.id}`);
      seen.unshift(...current.messages);
    }
    expect(seen.map((m) => m.content)).toEqual(numbered(120));
    expect(current.messages).toHaveLength(70 % 30);
  });

  it('answers exactly limit messages and has_more false when the page reaches the first message', async () => {
    const id = await conversationWith(numbered(5));
    expect(await page(`/conversations/${id}/messages?limit=5`)).toMatchObject({ has_more: false });
    const two = await page(`/conversations/${id}/messages?limit=2`);
    expect(two.messages.map((m) => m.content)).toEqual(['message 4', 'message 5']);
    expect(two.has_more).toBe(true);
    const first = (await page(`/conversations/${id}/messages?limit=1&before=${two.messages[0]!.id.toUpperCase()}`)).messages[0]!;
    expect(first.content).toBe('message 3');
    const all = await page(`/conversations/${id}/messages?limit=200`);
    const beforeFirst = await page(`/conversations/${id}/messages?before=${all.messages[0]!.id}`);
    expect(beforeFirst).toEqual({ messages: [], has_more: false });
  });

  it('answers 422 for a before that is not a message of this conversation', async () => {
    const id = await conversationWith(numbered(3));
    const other = await conversationWith(numbered(3));
    const foreign = (await page(`/conversations/${other}/messages`)).messages[0]!.id;
    for (const before of [randomUUID(), foreign, 'not-an-id']) {
      const response = await get(`/conversations/${id}/messages?before=${before}`);
      expect(response.status).toBe(422);
      expect(await response.json()).toEqual({
        detail: [{ loc: ['query', 'before'], msg: 'Not a message of this conversation', type: 'value_error' }],
      });
    }
  });

  it('answers 422 for a limit outside 1..200', async () => {
    const id = await conversationWith(numbered(1));
    for (const limit of ['0', '201', 'ten', '1.5']) {
      const response = await get(`/conversations/${id}/messages?limit=${limit}`);
      expect(response.status).toBe(422);
      expect(((await response.json()) as { detail: { loc: string[] }[] }).detail[0]!.loc).toEqual(['query', 'limit']);
    }
  });

  it('answers 404 for an unknown conversation and 403 for another user’s, on both reads', async () => {
    const id = await conversationWith(numbered(1));
    for (const path of [`/conversations/${id}`, `/conversations/${id}/messages`]) {
      const foreign = await get(path, BOB);
      expect(foreign.status).toBe(403);
      expect(await foreign.json()).toEqual({ detail: 'Not authorized' });
      const missing = await get(path.replace(id, randomUUID()));
      expect(missing.status).toBe(404);
      expect(await missing.json()).toEqual({ detail: 'Conversation not found' });
    }
  });
});
