import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { countTokens } from '../../src/tokens/count.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { DIALECTS } from '../support/databases.js';
import { send } from '../support/raw-http.js';

const ALICE = { 'x-api-key': 'alice-key-0123456789' };
const KEYS = { API_KEYS: 'alice:alice-key-0123456789' };

describe.each(DIALECTS)('odd text and ids on %s', (dialect) => {
  let t: TestApp;
  let base: string;
  beforeEach(async () => {
    t = await createTestApp({ dialect, env: KEYS });
    base = await t.app.listen({ port: 0, host: '127.0.0.1' });
  });
  afterEach(async () => t.close());

  const create = async (): Promise<string> =>
    ((await send(base, { method: 'POST', path: '/conversations/', headers: ALICE, body: { working_dir: t.workdir } })).json() as { id: string }).id;

  it('refuses U+0000 anywhere in a body string with 422 naming the field, storing nothing', async () => {
    const id = await create();
    const saved = await send(base, {
      method: 'POST',
      path: `/conversations/${id}/save`,
      headers: ALICE,
      body: '{"user_content": "before\\u0000after", "assistant_content": "ok"}',
    });
    expect(saved.status).toBe(422);
    expect(saved.json()).toEqual({ detail: [{ loc: ['body', 'user_content'], msg: 'String should not contain NUL characters (U+0000)', type: 'string_nul' }] });
    const titled = await send(base, { method: 'POST', path: '/conversations/', headers: ALICE, body: { working_dir: t.workdir, title: 'a\u0000' } });
    expect(titled.status).toBe(422);
    const run = await send(base, { method: 'POST', path: '/agents/run', headers: ALICE, body: { agent_type: 'explore', prompt: '\u0000' } });
    expect(run.status).toBe(422);
    expect((await send(base, { path: `/conversations/${id}`, headers: ALICE })).json()).toMatchObject({ messages: [] });
  });

  it('finds U+0000 deep in a large body, in a value or a key, and names where', async () => {
    const values: unknown[] = Array.from({ length: 200_000 }, (_, i) => (i % 2 === 0 ? i : { n: 'x' }));
    values[150_001] = { n: 'x', more: ['a', 'b\u0000'] };
    const inValue = await send(base, { method: 'POST', path: '/agents/run', headers: ALICE, body: { agent_type: 'explore', prompt: 'p', extra: values } });
    expect(inValue.json()).toEqual({ detail: [{ loc: ['body', 'extra', 150_001, 'more', 1], msg: 'String should not contain NUL characters (U+0000)', type: 'string_nul' }] });
    const inKey = await send(base, { method: 'POST', path: '/agents/run', headers: ALICE, body: '{"agent_type":"explore","prompt":"p","extra":{"a\\u0000b":1}}' });
    expect([inKey.status, inKey.json()]).toEqual([422, { detail: [{ loc: ['body', 'extra', 'a\u0000b'], msg: 'String should not contain NUL characters (U+0000)', type: 'string_nul' }] }]);
  });

  it('stores a lone surrogate half as U+FFFD, the same on both databases, and counts it so', async () => {
    const id = await create();
    const saved = await send(base, {
      method: 'POST',
      path: `/conversations/${id}/save`,
      headers: ALICE,
      body: '{"user_content": "a\\ud800b \\udc00 \\ud83d\\ude00", "assistant_content": "ok"}',
    });
    expect(saved.status).toBe(200);
    const expected = 'a\ufffdb \ufffd \u{1f600}';
    expect((saved.json() as { user_message: { content: string; token_count: number } }).user_message).toMatchObject({
      content: expected,
      token_count: countTokens(expected),
    });
    const detail = (await send(base, { path: `/conversations/${id}`, headers: ALICE })).json() as { title: string; messages: { content: string }[] };
    expect(detail.messages[0]!.content).toBe(expected);
    expect(detail.title).toBe(expected);
  });

  it("answers the owner's request for an upper-case id with 200", async () => {
    const id = await create();
    const upper = id.toUpperCase();
    expect((await send(base, { path: `/conversations/${upper}`, headers: ALICE })).json()).toMatchObject({ id });
    expect((await send(base, { method: 'POST', path: `/conversations/${upper}/save`, headers: ALICE, body: { user_content: 'hi', assistant_content: 'yo' } })).status).toBe(200);
    expect((await send(base, { method: 'DELETE', path: `/conversations/${upper}`, headers: ALICE })).status).toBe(204);
    expect((await send(base, { path: `/conversations/${id}`, headers: ALICE })).status).toBe(404);
  });

  it('checks the working directory when a conversation is created', async () => {
    const response = await send(base, { method: 'POST', path: '/conversations/', headers: ALICE, body: { agent_type: 'no-such-agent', working_dir: '/etc' } });
    expect([response.status, response.json()]).toEqual([400, { detail: 'Working directory not allowed: /etc' }]);
    const unknownAgent = await send(base, { method: 'POST', path: '/conversations/', headers: ALICE, body: { agent_type: 'no-such-agent', working_dir: t.workdir } });
    expect(unknownAgent.status).toBe(201);
    expect((await send(base, { path: '/conversations/', headers: ALICE })).json()).toMatchObject({ total: 1 });
  });
});
