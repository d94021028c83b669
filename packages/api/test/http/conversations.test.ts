import { randomUUID } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DIALECTS } from '../support/databases.js';
import { createTestApp, type TestApp } from '../support/app.js';

const ALICE = { 'x-api-key': 'alice-key-0123456789' };
const BOB = { 'x-api-key': 'bob-key-0123456789' };
const KEYS = { API_KEYS: 'alice:alice-key-0123456789,bob:bob-key-0123456789' };
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

describe.each(DIALECTS)('conversation routes on %s', (dialect) => {
  let t: TestApp;
  let clock: Date;

  beforeEach(async () => {
    clock = new Date('2026-03-01T12:00:00.000Z');
    t = await createTestApp({ dialect, env: KEYS, now: () => clock });
  });
  afterEach(async () => t.close());

  const create = async (headers = ALICE, body: object = {}) => {
    const response = await t.app.inject({ method: 'POST', url: '/conversations/', headers, payload: body });
    expect(response.statusCode).toBe(201);
    return response.json<{ id: string }>();
  };
  const save = (id: string, headers = ALICE, body: object = { user_content: 'hello', assistant_content: 'hi!' }) =>
    t.app.inject({ method: 'POST', url: `/conversations/${id}/save`, headers, payload: body });

  it('creates an empty conversation with the defaults and no user_id in the body', async () => {
    const body = await create();
    expect(body).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      agent_type: 'explore',
      title: null,
      working_dir: '.',
      // LLM_MODEL, stored with the conversation when it names no model.
      model: 'qwen2.5-coder:7b',
      total_tokens: 0,
      created_at: '2026-03-01T12:00:00.000Z',
      updated_at: null,
    });
  });

  it('keeps the given agent type, working dir and title', async () => {
    const body = await create(ALICE, { agent_type: 'task', working_dir: t.workdir, title: 'Refactor' });
    expect(body).toMatchObject({ agent_type: 'task', working_dir: t.workdir, title: 'Refactor' });
  });

  it('answers 422 for an invalid body', async () => {
    const response = await t.app.inject({ method: 'POST', url: '/conversations/', headers: ALICE, payload: { title: 5 } });
    expect(response.statusCode).toBe(422);
    expect(response.json()).toEqual({ detail: [{ loc: ['body', 'title'], msg: 'Input should be a valid string', type: 'string_type' }] });
  });

  it('saves a user and an assistant message, counts tokens and titles the conversation', async () => {
    const { id } = await create();
    clock = new Date('2026-03-01T12:05:00.000Z');
    const response = await save(id);
    expect(response.statusCode).toBe(200);
    const body = response.json();
    expect(body).toEqual({
      user_message: { id: expect.any(String), role: 'user', content: 'hello', token_count: 1, is_summary: false, created_at: '2026-03-01T12:05:00.000Z' },
      assistant_message: { id: expect.any(String), role: 'assistant', content: 'hi!', token_count: 2, is_summary: false, created_at: '2026-03-01T12:05:00.000Z' },
      total_tokens: 3,
    });
    const detail = (await t.app.inject({ url: `/conversations/${id}`, headers: ALICE })).json();
    expect(detail).toMatchObject({ title: 'hello', total_tokens: 3, updated_at: '2026-03-01T12:05:00.000Z' });
    expect(detail.messages.map((m: { role: string }) => m.role)).toEqual(['user', 'assistant']);
    expect(detail.messages[0]).not.toHaveProperty('summarizes_up_to');
    expect(detail).not.toHaveProperty('user_id');
  });

  it('titles from the first user message: 100 code points and ...', async () => {
    const { id } = await create();
    const long = `${'日本語'.repeat(40)}`;
    await save(id, ALICE, { user_content: long, assistant_content: '' });
    await save(id, ALICE, { user_content: 'second message', assistant_content: 'x' });
    const detail = (await t.app.inject({ url: `/conversations/${id}`, headers: ALICE })).json();
    expect(detail.title).toBe(`${Array.from(long).slice(0, 100).join('')}...`);
  });

  it('refuses an empty user_content with 422 and accepts an empty assistant_content', async () => {
    const { id } = await create();
    const bad = await save(id, ALICE, { user_content: '', assistant_content: 'x' });
    expect(bad.statusCode).toBe(422);
    expect(bad.json().detail[0]).toMatchObject({ loc: ['body', 'user_content'], type: 'string_too_short' });
    expect((await save(id, ALICE, { user_content: 'x', assistant_content: '' })).statusCode).toBe(200);
  });

  it('answers 404 Conversation not found before 403 Not authorized', async () => {
    const { id } = await create();
    for (const [method, url, payload] of [
      ['GET', `/conversations/${id}`, undefined],
      ['DELETE', `/conversations/${id}`, undefined],
      ['POST', `/conversations/${id}/save`, { user_content: 'a', assistant_content: 'b' }],
    ] as const) {
      const forbidden = await t.app.inject({ method, url, headers: BOB, ...(payload ? { payload } : {}) });
      expect([forbidden.statusCode, forbidden.json()]).toEqual([403, { detail: 'Not authorized' }]);
      const missing = await t.app.inject({ method, url: url.replace(id, randomUUID()), headers: BOB, ...(payload ? { payload } : {}) });
      expect([missing.statusCode, missing.json()]).toEqual([404, { detail: 'Conversation not found' }]);
    }
    const notUuid = await t.app.inject({ url: '/conversations/not-a-uuid', headers: ALICE });
    expect([notUuid.statusCode, notUuid.json()]).toEqual([404, { detail: 'Conversation not found' }]);
  });

  it('deletes with 204 and then answers 404', async () => {
    const { id } = await create();
    await save(id);
    const deleted = await t.app.inject({ method: 'DELETE', url: `/conversations/${id}`, headers: ALICE });
    expect([deleted.statusCode, deleted.body]).toEqual([204, '']);
    expect((await t.app.inject({ url: `/conversations/${id}`, headers: ALICE })).statusCode).toBe(404);
  });

  it("lists only the caller's conversations by recent activity, with paging and total", async () => {
    const first = await create();
    clock = new Date('2026-03-01T12:01:00.000Z');
    const second = await create();
    await create(BOB);
    clock = new Date('2026-03-01T12:02:00.000Z');
    await save(first.id);
    const list = (await t.app.inject({ url: '/conversations/', headers: ALICE })).json();
    expect(list.total).toBe(2);
    expect(list.conversations.map((c: { id: string }) => c.id)).toEqual([first.id, second.id]);
    expect(list.conversations[0].created_at).toMatch(ISO);
    const paged = (await t.app.inject({ url: '/conversations/?limit=1&offset=1', headers: ALICE })).json();
    expect(paged).toMatchObject({ total: 2, conversations: [{ id: second.id }] });
  });

  it.each(['limit=0', 'limit=101', 'offset=-1', 'limit=abc'])('answers 422 for %s', async (query) => {
    const response = await t.app.inject({ url: `/conversations/?${query}`, headers: ALICE });
    expect(response.statusCode).toBe(422);
    expect(response.json().detail[0].loc).toEqual(['query', query.split('=')[0]]);
  });

  it('expires idle conversations after SESSION_TTL_HOURS: 404 and out of the list', async () => {
    const { id } = await create();
    clock = new Date('2026-03-02T12:00:00.001Z');
    expect((await t.app.inject({ url: `/conversations/${id}`, headers: ALICE })).statusCode).toBe(404);
    expect((await save(id)).statusCode).toBe(404);
    expect((await t.app.inject({ url: '/conversations/', headers: ALICE })).json()).toEqual({ conversations: [], total: 0 });
  });

  it('keeps a conversation alive while it is used', async () => {
    const { id } = await create();
    clock = new Date('2026-03-02T11:00:00.000Z');
    await save(id);
    clock = new Date('2026-03-03T10:00:00.000Z');
    expect((await t.app.inject({ url: `/conversations/${id}`, headers: ALICE })).statusCode).toBe(200);
  });
});

describe('conversation expiry switched off', () => {
  it('keeps conversations forever with SESSION_TTL_HOURS=0', async () => {
    let clock = new Date('2026-03-01T00:00:00.000Z');
    const t = await createTestApp({ env: { SESSION_TTL_HOURS: '0' }, now: () => clock });
    try {
      const { id } = (await t.app.inject({ method: 'POST', url: '/conversations/', payload: {} })).json();
      clock = new Date('2030-01-01T00:00:00.000Z');
      expect((await t.app.inject({ url: `/conversations/${id}` })).statusCode).toBe(200);
    } finally {
      await t.close();
    }
  });
});
