import { mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { scripted, startScriptedModel, type ScriptedModel } from '@mada/testkit';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { countTokens } from '../../src/tokens/count.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { DIALECTS } from '../support/databases.js';
import { send } from '../support/raw-http.js';
import { startService } from '../support/service-process.js';

const ALICE = { 'x-api-key': 'alice-key-0123456789' };
const BOB = { 'x-api-key': 'bob-key-0123456789' };
const KEYS = { API_KEYS: 'alice:alice-key-0123456789,bob:bob-key-0123456789' };
// Bytes high enough that the token limit is the one reached (MAX_MESSAGE_BYTES: its own test below).
const LIMITS = { ...KEYS, MAX_MESSAGE_TOKENS: '50', MAX_MESSAGE_BYTES: '2000000', MAX_CONVERSATIONS_PER_USER: '2' };

const long = 'word '.repeat(80);
const tooLarge = { detail: `Message too large: ${countTokens(long)} tokens (max 50)` };

describe.each(DIALECTS)('message and conversation limits on %s', (dialect) => {
  let model: ScriptedModel;
  let t: TestApp;
  let base: string;
  const others: TestApp[] = [];

  beforeEach(async () => {
    model = await startScriptedModel();
    t = await createTestApp({ dialect, env: LIMITS, model: { url: model.url } });
    base = await t.app.listen({ port: 0, host: '127.0.0.1' });
  });
  afterEach(async () => {
    for (const other of others.splice(0)) await other.close();
    await t.close();
    await model.close();
  });

  const create = async (headers = ALICE) => send(base, { method: 'POST', path: '/conversations/', headers, body: { working_dir: t.workdir } });
  const post = (path: string, body: object, headers = ALICE) => send(base, { method: 'POST', path, headers, body });

  it('refuses a message over MAX_MESSAGE_TOKENS with 413 on every route a client sends one, storing and running nothing', async () => {
    const id = ((await create()).json() as { id: string }).id;
    const refused = [
      await post(`/conversations/${id}/messages`, { content: long }),
      await post(`/conversations/${id}/stream`, { content: long }),
      await post(`/conversations/${id}/save`, { user_content: long, assistant_content: 'ok' }),
      await post(`/conversations/${id}/save`, { user_content: 'ok', assistant_content: long }),
      await post('/agents/run', { agent_type: 'explore', prompt: long, working_dir: t.workdir }),
      await post('/agents/stream', { agent_type: 'explore', prompt: long, working_dir: t.workdir }),
      await post('/runs', { agent_type: 'explore', prompt: long, working_dir: t.workdir }),
    ];
    for (const response of refused) expect([response.status, response.json()]).toEqual([413, tooLarge]);
    expect((await send(base, { path: '/runs', headers: ALICE })).json()).toMatchObject({ total: 0 });
    expect(model.requests).toHaveLength(0);
    expect((await send(base, { path: `/conversations/${id}`, headers: ALICE })).json()).toMatchObject({ messages: [] });
  });

  it('accepts a message at the limit', async () => {
    const id = ((await create()).json() as { id: string }).id;
    const fits = 'word '.repeat(40);
    expect(countTokens(fits)).toBeLessThanOrEqual(50);
    expect((await post(`/conversations/${id}/save`, { user_content: fits, assistant_content: fits })).status).toBe(200);
    model.push(scripted.text('fine'));
    expect((await post('/agents/run', { agent_type: 'explore', prompt: fits, working_dir: t.workdir })).json()).toMatchObject({ success: true });
  });

  it('counts a huge message without spaces and answers 413 with its size', async () => {
    const id = ((await create()).json() as { id: string }).id;
    const response = await post(`/conversations/${id}/save`, { user_content: 'x'.repeat(1_500_000), assistant_content: '' });
    expect(response.status).toBe(413);
    const n = Number(/^Message too large: (\d+) tokens \(max 50\)$/.exec((response.json() as { detail: string }).detail)?.[1]);
    // Counting in pieces stays within 1% of what the tokenizer says for a shorter run of the same letter.
    const exact = (countTokens('x'.repeat(8000)) / 8000) * 1_500_000;
    expect(Math.abs(n - exact) / exact).toBeLessThan(0.01);
  });

  it('refuses a conversation past MAX_CONVERSATIONS_PER_USER with 403, per user', async () => {
    expect((await create()).status).toBe(201);
    expect((await create()).status).toBe(201);
    const refused = await create();
    expect([refused.status, refused.json()]).toEqual([403, { detail: 'Conversation limit reached (2)' }]);
    expect((await create(BOB)).status).toBe(201);
    const id = ((await send(base, { path: '/conversations/', headers: ALICE })).json() as { conversations: { id: string }[] }).conversations[0]!.id;
    expect((await send(base, { method: 'DELETE', path: `/conversations/${id}`, headers: ALICE })).status).toBe(204);
    expect((await create()).status).toBe(201);
  });

  it('stores exactly up to MAX_CONVERSATIONS_PER_USER when creations race (on PostgreSQL across two replicas)', async () => {
    expect((await create()).status).toBe(201);
    // Several replicas share one PostgreSQL database; a SQLite file is served by one process
    // (two processes on one file: the test at the end of this file).
    let replica = { base, workdir: t.workdir };
    if (dialect === 'postgres') {
      const second = await createTestApp({ dialect, env: LIMITS, model: { url: model.url }, shareDatabaseOf: t });
      others.push(second);
      replica = { base: await second.app.listen({ port: 0, host: '127.0.0.1' }), workdir: second.workdir };
    }
    const racing = await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        i % 2 === 0 ? create() : send(replica.base, { method: 'POST', path: '/conversations/', headers: ALICE, body: { working_dir: replica.workdir } }),
      ),
    );
    const statuses = racing.map((response) => response.status).sort();
    expect(statuses).toEqual([201, ...Array<number>(11).fill(403)]);
    for (const refused of racing.filter((response) => response.status === 403)) expect(refused.json()).toEqual({ detail: 'Conversation limit reached (2)' });
    const listed = (await send(base, { path: '/conversations/?limit=100', headers: ALICE })).json() as { conversations: unknown[]; total: number };
    expect([listed.conversations.length, listed.total]).toEqual([2, 2]);
    // The refused creations left no count behind: after a delete, exactly one more fits.
    const id = (listed.conversations[0] as { id: string }).id;
    expect((await send(base, { method: 'DELETE', path: `/conversations/${id}`, headers: ALICE })).status).toBe(204);
    expect((await create()).status).toBe(201);
    expect((await create()).status).toBe(403);
  });

  it('keeps data stored before a limit was lowered readable', async () => {
    const id = ((await create()).json() as { id: string }).id;
    await create();
    expect((await post(`/conversations/${id}/save`, { user_content: 'word '.repeat(45), assistant_content: 'ok' })).status).toBe(200);
    const stricter = await createTestApp({ dialect, env: { ...KEYS, MAX_MESSAGE_TOKENS: '10', MAX_CONVERSATIONS_PER_USER: '1' }, shareDatabaseOf: t });
    others.push(stricter);
    const strictBase = await stricter.app.listen({ port: 0, host: '127.0.0.1' });
    const detail = await send(strictBase, { path: `/conversations/${id}`, headers: ALICE });
    expect(detail.status).toBe(200);
    expect((detail.json() as { messages: { content: string }[] }).messages[0]!.content).toBe('word '.repeat(45));
    expect((await send(strictBase, { path: '/conversations/', headers: ALICE })).json()).toMatchObject({ total: 2 });
  });
});

describe.each(DIALECTS)('the message size in bytes on %s, at the default limits', (dialect) => {
  let model: ScriptedModel;
  let t: TestApp;
  let base: string;

  beforeEach(async () => {
    model = await startScriptedModel();
    t = await createTestApp({ dialect, env: KEYS, model: { url: model.url } });
    base = await t.app.listen({ port: 0, host: '127.0.0.1' });
  });
  afterEach(async () => {
    await t.close();
    await model.close();
  });

  const post = (path: string, body: object) => send(base, { method: 'POST', path, headers: ALICE, body });

  it('refuses a megabyte of whitespace, a few thousand tokens, with 413 on every route, storing and running nothing', async () => {
    const blank = ' '.repeat(1_100_000);
    // Well within MAX_MESSAGE_TOKENS: the bytes alone refuse it.
    expect(countTokens(blank)).toBeLessThan(32_000);
    const id = ((await post('/conversations/', { working_dir: t.workdir })).json() as { id: string }).id;
    const refused = [
      await post(`/conversations/${id}/messages`, { content: blank }),
      await post(`/conversations/${id}/stream`, { content: blank }),
      await post(`/conversations/${id}/runs`, { content: blank }),
      await post(`/conversations/${id}/save`, { user_content: blank, assistant_content: 'ok' }),
      await post(`/conversations/${id}/save`, { user_content: 'ok', assistant_content: blank }),
      await post('/agents/run', { agent_type: 'explore', prompt: blank, working_dir: t.workdir }),
      await post('/agents/stream', { agent_type: 'explore', prompt: blank, working_dir: t.workdir }),
      await post('/runs', { agent_type: 'explore', prompt: blank, working_dir: t.workdir }),
    ];
    for (const response of refused) expect([response.status, response.json()]).toEqual([413, { detail: 'Message too large: 1100000 bytes (max 262144)' }]);
    expect(model.requests).toHaveLength(0);
    expect((await send(base, { path: `/conversations/${id}`, headers: ALICE })).json()).toMatchObject({ messages: [], total_tokens: 0 });
    expect((await send(base, { path: '/runs', headers: ALICE })).json()).toMatchObject({ total: 0 });
  });

  it('stores a message of exactly MAX_MESSAGE_BYTES, counting bytes of UTF-8, not characters', async () => {
    const id = ((await post('/conversations/', { working_dir: t.workdir })).json() as { id: string }).id;
    // 'é' is two bytes: both texts are 262,143 characters, the second one byte over the limit.
    const atLimit = `é${' '.repeat(262_142)}`;
    expect((await post(`/conversations/${id}/save`, { user_content: atLimit, assistant_content: 'ok' })).status).toBe(200);
    const over = await post(`/conversations/${id}/save`, { user_content: `éé${' '.repeat(262_141)}`, assistant_content: 'ok' });
    expect([over.status, over.json()]).toEqual([413, { detail: 'Message too large: 262145 bytes (max 262144)' }]);
  });
});

describe('the conversation limit with two service processes on one SQLite file', () => {
  const cleanups: (() => unknown)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  it('stores exactly up to the limit when creations race across the processes', async () => {
    // In one process SQLite answers each request before the next is read; two processes race for real.
    const workdir = realpathSync(mkdtempSync(join(tmpdir(), 'mada-limit-')));
    cleanups.push(() => rmSync(workdir, { recursive: true, force: true }));
    const env = { ...LIMITS, DATABASE_URL: `sqlite:///${join(workdir, 'mada.db')}`, ALLOWED_PATHS: workdir, RATE_LIMIT_PER_MINUTE: '0', LLM_BASE_URL: 'http://127.0.0.1:9' };
    const first = await startService(env, workdir);
    cleanups.push(() => first.child.kill('SIGKILL'));
    const second = await startService(env, workdir);
    cleanups.push(() => second.child.kill('SIGKILL'));
    const create = (base: string) => send(base, { method: 'POST', path: '/conversations/', headers: ALICE, body: { working_dir: workdir } });
    expect((await create(first.url)).status).toBe(201);
    const racing = await Promise.all(Array.from({ length: 16 }, (_, i) => create(i % 2 === 0 ? first.url : second.url)));
    expect(racing.map((response) => response.status).sort()).toEqual([201, ...Array<number>(15).fill(403)]);
    const listed = (await send(second.url, { path: '/conversations/?limit=100', headers: ALICE })).json() as { conversations: unknown[]; total: number };
    expect([listed.conversations.length, listed.total]).toEqual([2, 2]);
  });
});
