import { scripted, startScriptedModel, type ScriptedModel } from '@mada/testkit';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SUMMARY_INSTRUCTION } from '../../src/conversations/summarizer.js';
import { countTokens } from '../../src/tokens/count.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { DIALECTS } from '../support/databases.js';
import { parseFrames } from '../support/sse.js';

/** n tokens of text: "word" then " word" each count one cl100k token. */
const words = (n: number, word = 'word') => [word, ...Array.from({ length: n - 1 }, () => ` ${word}`)].join('');
const SMALL_WINDOW = { MAX_CONTEXT_TOKENS: '50', SUMMARIZATION_THRESHOLD: '0.8', KEEP_RECENT_MESSAGES: '2' };

describe.each(DIALECTS)('conversation turns on %s', (dialect) => {
  let model: ScriptedModel;
  let t: TestApp;

  const start = async (env: Record<string, string> = {}) => {
    t = await createTestApp({ dialect, model: { url: model.url }, env: { RETRY_MAX_ATTEMPTS: '1', ...env } });
  };
  beforeEach(async () => {
    model = await startScriptedModel();
  });
  afterEach(async () => {
    await t.close();
    await model.close();
  });

  const create = async (agent_type = 'explore') =>
    (await t.app.inject({ method: 'POST', url: '/conversations/', payload: { agent_type } })).json<{ id: string }>().id;
  const save = (id: string, user: string, assistant: string) =>
    t.app.inject({ method: 'POST', url: `/conversations/${id}/save`, payload: { user_content: user, assistant_content: assistant } });
  const send = (id: string, content: string) => t.app.inject({ method: 'POST', url: `/conversations/${id}/messages`, payload: { content } });
  const promptOf = (i: number) => model.requests[i]?.messages.find((m) => m.role === 'user')?.content;
  const detail = async (id: string) => (await t.app.inject({ url: `/conversations/${id}` })).json();

  it('sends only the current request when there is no history, and stores both messages', async () => {
    await start();
    const id = await create();
    model.push(scripted.text('Hello back'));
    const response = await send(id, 'hello');
    expect(response.statusCode).toBe(200);
    expect(promptOf(0)).toBe('<current_request>\nhello\n</current_request>');
    const body = response.json();
    expect(body).toMatchObject({
      user_message: { role: 'user', content: 'hello', token_count: 1, is_summary: false },
      assistant_message: { role: 'assistant', content: 'Hello back', token_count: 2, is_summary: false },
      total_tokens: 3,
      summarized: false,
    });
    expect((await detail(id)).title).toBe('hello');
  });

  it('runs the agent in the requested mode: plan offers no write tool', async () => {
    await start();
    const id = await create('task');
    model.push(scripted.toolCalls({ name: 'glob_files', arguments: { pattern: '*' } }), scripted.text('## Analysis\nnone\n## Recommendations\nnone'));
    const response = await t.app.inject({ method: 'POST', url: `/conversations/${id}/messages`, payload: { content: 'look', mode: 'plan' } });
    expect(response.statusCode).toBe(200);
    expect(model.requests[0]?.tools.map((tool) => tool.name).sort()).toEqual(['bash_readonly', 'glob_files', 'grep_content', 'read_file', 'spawn_agent']);
    expect(model.requests[0]?.messages[0]?.content).toContain('## Recommendations');
  });

  it('puts the last keep_recent messages before the request in <recent_conversation>', async () => {
    await start({ KEEP_RECENT_MESSAGES: '2' });
    const id = await create();
    await save(id, 'first question', 'first answer');
    await save(id, 'second question', 'second answer');
    model.push(scripted.text('ok'));
    await send(id, 'third');
    expect(promptOf(0)).toBe(
      '<recent_conversation>\nUSER: second question\nASSISTANT: second answer\n</recent_conversation>\n\n<current_request>\nthird\n</current_request>',
    );
  });

  it('summarizes above the threshold: exact summarizer input, summary in the context, token arithmetic', async () => {
    await start(SMALL_WINDOW);
    const id = await create();
    await save(id, words(10, 'alpha'), words(10, 'beta'));
    await save(id, words(10, 'gamma'), words(10, 'delta'));
    model.push(scripted.text('Summary one'), scripted.text('The answer'));
    const response = await send(id, words(5, 'eps'));
    const body = response.json();
    expect(body.summarized).toBe(true);
    expect(promptOf(0)).toBe(
      `${SUMMARY_INSTRUCTION}\n\n<conversation>\nUSER: ${words(10, 'alpha')}\nASSISTANT: ${words(10, 'beta')}\nUSER: ${words(10, 'gamma')}\n</conversation>`,
    );
    expect(promptOf(1)).toBe(
      `<conversation_summary>\nSummary one\n</conversation_summary>\n\n<recent_conversation>\nASSISTANT: ${words(10, 'delta')}\n</recent_conversation>\n\n<current_request>\n${words(5, 'eps')}\n</current_request>`,
    );
    const eps = countTokens(words(5, 'eps'));
    expect(body.total_tokens).toBe(40 + eps - 30 + countTokens('Summary one') + countTokens('The answer'));
    const stored = await detail(id);
    expect(stored.messages.map((m: { role: string; is_summary: boolean }) => [m.role, m.is_summary])).toEqual([
      ['user', true],
      ['assistant', true],
      ['user', true],
      ['assistant', false],
      ['user', false],
      ['summary', true],
      ['assistant', false],
    ]);
    const summary = await t.database.repository.latestSummary(id);
    expect(summary?.summarizesUpTo).toBe(stored.messages[2].id);
  });

  it('supersedes the first summary on a second summarization and keeps total_tokens = active tokens', async () => {
    await start(SMALL_WINDOW);
    const id = await create();
    await save(id, words(10, 'alpha'), words(10, 'beta'));
    await save(id, words(10, 'gamma'), words(10, 'delta'));
    model.push(scripted.text('Summary one'), scripted.text('The answer'));
    await send(id, words(5, 'eps'));
    await save(id, words(20, 'zeta'), words(20, 'eta'));
    model.push(scripted.text('Summary two'), scripted.text('Second answer'));
    const second = (await send(id, 'theta')).json();
    expect(second.summarized).toBe(true);
    expect(promptOf(2)).toContain('<conversation>\n[Previous Summary]: Summary one\nASSISTANT: ');
    const messages = (await detail(id)).messages as { role: string; is_summary: boolean; token_count: number; content: string }[];
    const active = messages.filter((m) => !m.is_summary);
    expect(second.total_tokens).toBe(active.reduce((n, m) => n + m.token_count, 0) + countTokens('Summary two'));
    expect(promptOf(3)).toMatch(/^<conversation_summary>\nSummary two\n<\/conversation_summary>/);
  });

  it('falls back to first two, omitted count, last two when summary generation fails', async () => {
    await start({ ...SMALL_WINDOW, KEEP_RECENT_MESSAGES: '1' });
    const id = await create();
    await save(id, words(10, 'a'), words(10, 'b'));
    await save(id, words(10, 'c'), words(10, 'd'));
    await save(id, words(10, 'e'), words(10, 'f'));
    model.push(scripted.httpError(400, 'no summaries today'), scripted.text('answer'));
    expect((await send(id, 'g')).json().summarized).toBe(true);
    expect((await t.database.repository.latestSummary(id))?.content.split('\n')).toEqual([
      `USER: ${words(10, 'a')}`,
      `ASSISTANT: ${words(10, 'b')}`,
      '[... 2 messages omitted ...]',
      `USER: ${words(10, 'e')}`,
      `ASSISTANT: ${words(10, 'f')}`,
    ]);
  });

  it('keeps 4 or fewer messages verbatim in the fallback summary', async () => {
    await start({ ...SMALL_WINDOW, KEEP_RECENT_MESSAGES: '1' });
    const id = await create();
    await save(id, words(15, 'a'), words(15, 'b'));
    model.push(scripted.httpError(400), scripted.text('answer'));
    await send(id, words(15, 'c'));
    expect((await t.database.repository.latestSummary(id))?.content).toBe(`USER: ${words(15, 'a')}\nASSISTANT: ${words(15, 'b')}`);
  });

  it('does not summarize at exactly the threshold', async () => {
    await start(SMALL_WINDOW);
    const id = await create();
    await save(id, words(10, 'a'), words(10, 'b'));
    await save(id, words(10, 'c'), words(9, 'd'));
    model.push(scripted.text('answer'));
    const body = (await send(id, 'e')).json();
    expect(body.summarized).toBe(false);
    expect(model.requests).toHaveLength(1);
  });

  it('does not summarize with exactly keep_recent + 1 messages, however many tokens', async () => {
    await start(SMALL_WINDOW);
    const id = await create();
    await save(id, words(40, 'a'), words(40, 'b'));
    model.push(scripted.text('answer'));
    expect((await send(id, 'c')).json().summarized).toBe(false);
  });

  it('answers 500 Agent error and keeps the user message when the agent fails', async () => {
    await start();
    const id = await create();
    model.push(scripted.httpError(400, 'bad model'));
    const response = await send(id, 'please work');
    expect(response.statusCode).toBe(500);
    expect(response.json().detail).toMatch(/^Agent error: .*bad model/);
    const stored = await detail(id);
    expect(stored.messages.map((m: { role: string; content: string }) => [m.role, m.content])).toEqual([['user', 'please work']]);
    expect(stored.total_tokens).toBe(2);
  });

  it('fails the agent step for an unknown agent type stored on the conversation', async () => {
    await start();
    const id = await create('wizard');
    const response = await send(id, 'hi');
    expect([response.statusCode, response.json()]).toEqual([500, { detail: 'Agent error: Unknown agent type: wizard' }]);
  });

  it('refuses a second turn while one runs with 409 Conversation is busy', async () => {
    await start();
    const id = await create();
    let release!: () => void;
    model.push(scripted.chunks(scripted.until(new Promise<void>((r) => (release = r))), 'done'), scripted.text('second'));
    const first = send(id, 'slow one');
    await new Promise((r) => setTimeout(r, 200));
    const second = await send(id, 'fast one');
    expect([second.statusCode, second.json()]).toEqual([409, { detail: 'Conversation is busy' }]);
    release();
    expect((await first).statusCode).toBe(200);
    expect((await send(id, 'after')).statusCode).toBe(200);
  });

  it('refuses the second turn with 409 when it reaches another replica on the same database', async () => {
    await start();
    const other = await createTestApp({ model: { url: model.url }, shareDatabaseOf: t });
    try {
      const id = await create();
      let release!: () => void;
      model.push(scripted.chunks(scripted.until(new Promise<void>((r) => (release = r))), 'done'));
      const first = send(id, 'slow one');
      await new Promise((r) => setTimeout(r, 200));
      const second = await other.app.inject({ method: 'POST', url: `/conversations/${id}/messages`, payload: { content: 'elsewhere' } });
      expect([second.statusCode, second.json()]).toEqual([409, { detail: 'Conversation is busy' }]);
      release();
      expect((await first).statusCode).toBe(200);
    } finally {
      await other.close();
    }
  });

  it('streams a turn and ends with done carrying the stored ids, total and summarized', async () => {
    await start();
    const id = await create();
    model.push(scripted.chunks('Hi ', 'there'));
    const response = await t.app.inject({ method: 'POST', url: `/conversations/${id}/stream`, payload: { content: 'hello', mode: 'plan' } });
    expect(response.headers['content-type']).toMatch(/^text\/event-stream/);
    const frames = parseFrames(response.body);
    const stored = await detail(id);
    expect(frames).toEqual([
      { event: 'chunk', data: 'Hi ' },
      { event: 'chunk', data: 'there' },
      {
        event: 'done',
        mode: 'plan',
        user_message_id: stored.messages[0].id,
        assistant_message_id: stored.messages[1].id,
        total_tokens: stored.total_tokens,
        summarized: false,
      },
    ]);
    expect(stored.messages[1].content).toBe('Hi there');
  });

  it('answers 404 and 403 on the streamed turn with a status, not a stream', async () => {
    await start({ API_KEYS: 'a:key-a-123456,b:key-b-123456' });
    const created = await t.app.inject({ method: 'POST', url: '/conversations/', headers: { 'x-api-key': 'key-a-123456' }, payload: {} });
    const url = `/conversations/${created.json().id}/stream`;
    const forbidden = await t.app.inject({ method: 'POST', url, headers: { 'x-api-key': 'key-b-123456' }, payload: { content: 'x' } });
    expect([forbidden.statusCode, forbidden.json()]).toEqual([403, { detail: 'Not authorized' }]);
  });
});

describe('a streamed turn whose client goes away', () => {
  it('keeps the user message, stores no assistant message, and closes the model call', async () => {
    const model = await startScriptedModel();
    const t = await createTestApp({ model: { url: model.url } });
    try {
      const id = (await t.app.inject({ method: 'POST', url: '/conversations/', payload: {} })).json().id;
      model.push(scripted.chunks('partial ', scripted.until(new Promise(() => undefined)), 'never'));
      const address = await t.app.listen({ port: 0, host: '127.0.0.1' });
      const controller = new AbortController();
      const response = await fetch(`${address}/conversations/${id}/stream`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ content: 'cancel me' }),
        signal: controller.signal,
      });
      const reader = response.body!.getReader();
      await reader.read();
      controller.abort();
      expect(await model.requests[0]?.outcome).toBe('client-closed');
      await expect.poll(() => t.runs.active).toBe(0);
      const messages = await t.database.repository.messagesAfter(id, 0, 100);
      expect(messages.map((m) => [m.role, m.content])).toEqual([['user', 'cancel me']]);
      // The cancelled turn's run no longer holds the conversation: the next turn is accepted.
      model.push(scripted.text('next answer'));
      expect((await t.app.inject({ method: 'POST', url: `/conversations/${id}/runs`, payload: { content: 'again' } })).statusCode).toBe(202);
    } finally {
      await t.close();
      await model.close();
    }
  });
});
