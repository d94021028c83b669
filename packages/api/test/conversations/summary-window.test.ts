import { scripted, startScriptedModel, type RecordedRequest, type ScriptedModel } from '@mada/testkit';
import { afterEach, describe, expect, it } from 'vitest';
import { SUMMARY_INSTRUCTION } from '../../src/conversations/summarizer.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { receivedTokens } from '../support/request-tokens.js';

/** n tokens of text: "word" then " word" each count one cl100k token. */
const words = (n: number, word: string) => [word, ...Array.from({ length: n - 1 }, () => ` ${word}`)].join('');

let model: ScriptedModel;
let t: TestApp;

afterEach(async () => {
  await t.close();
  await model.close();
});

const promptOf = (request: RecordedRequest) => request.messages.find((m) => m.role === 'user')?.content ?? '';
const isSummaryRequest = (request: RecordedRequest) => promptOf(request).startsWith(SUMMARY_INSTRUCTION);

describe.each(['ollama', 'openai'] as const)('summarization within the runtime window over %s', (protocol) => {
  it('summarizes a history larger than the window in parts, never sending more than the window', async () => {
    model = await startScriptedModel({ runtime: protocol === 'ollama' ? { contextLength: 4096 } : { maxModelLen: 4096 } });
    t = await createTestApp({
      model: { url: model.url, protocol },
      env: { MAX_CONTEXT_TOKENS: '3000', SUMMARIZATION_THRESHOLD: '0.5', KEEP_RECENT_MESSAGES: '2', RETRY_MAX_ATTEMPTS: '1' },
    });
    const id = (await t.app.inject({ method: 'POST', url: '/conversations/', payload: { agent_type: 'explore' } })).json<{ id: string }>().id;
    // Six exchanges of about 800 tokens, and one message larger than the whole window.
    for (let i = 0; i < 6; i++) {
      const user = i === 2 ? words(6000, 'huge') : words(400, `u${i}`);
      await t.app.inject({ method: 'POST', url: `/conversations/${id}/save`, payload: { user_content: user, assistant_content: words(400, `a${i}`) } });
    }
    let part = 0;
    const answer = (request: RecordedRequest) => scripted.text(isSummaryRequest(request) ? `summary ${++part}` : 'final answer');
    model.push(...Array.from({ length: 20 }, () => answer));

    const response = await t.app.inject({ method: 'POST', url: `/conversations/${id}/messages`, payload: { content: 'what now?' } });
    expect(response.json()).toMatchObject({ summarized: true, assistant_message: { content: 'final answer' } });

    const summaries = model.requests.filter(isSummaryRequest);
    expect(summaries.length).toBeGreaterThan(2);
    for (const request of model.requests) expect(receivedTokens(request)).toBeLessThanOrEqual(4096 - 1024);
    expect(summaries.some((r) => promptOf(r).includes("characters cut to fit the model's context window"))).toBe(true);
    // The last request combines the parts' summaries.
    expect(promptOf(summaries.at(-1)!)).toContain('[Summary of part 1 of ');
    const detail = (await t.app.inject({ url: `/conversations/${id}` })).json<{ messages: { role: string; content: string }[] }>();
    expect(detail.messages.filter((m) => m.role === 'summary').map((m) => m.content)).toEqual([`summary ${part}`]);
  });
});

describe('the summarization threshold without MAX_CONTEXT_TOKENS', () => {
  it("follows the window the runtime reports: an 8192-token model's conversation is summarized before it outgrows it", async () => {
    model = await startScriptedModel({ runtime: { contextLength: 8192 } });
    t = await createTestApp({ model: { url: model.url }, env: { KEEP_RECENT_MESSAGES: '2', RETRY_MAX_ATTEMPTS: '1' } });
    const id = (await t.app.inject({ method: 'POST', url: '/conversations/', payload: {} })).json<{ id: string }>().id;
    // About 6800 tokens: past 80 percent of the model's 8192, nowhere near 80 percent of 128,000.
    for (let i = 0; i < 4; i++) {
      await t.app.inject({ method: 'POST', url: `/conversations/${id}/save`, payload: { user_content: words(850, `u${i}`), assistant_content: words(850, `a${i}`) } });
    }
    const answer = (request: RecordedRequest) => scripted.text(isSummaryRequest(request) ? 'the summary' : 'final answer');
    model.push(...Array.from({ length: 10 }, () => answer));
    const response = await t.app.inject({ method: 'POST', url: `/conversations/${id}/messages`, payload: { content: 'what now?' } });
    expect(response.json()).toMatchObject({ summarized: true, assistant_message: { content: 'final answer' } });
    expect(model.requests.filter(isSummaryRequest).length).toBeGreaterThan(0);
    for (const request of model.requests) expect(receivedTokens(request)).toBeLessThanOrEqual(8192);
    const detail = (await t.app.inject({ url: `/conversations/${id}` })).json<{ messages: { role: string; content: string }[] }>();
    expect(detail.messages.filter((m) => m.role === 'summary').map((m) => m.content)).toEqual(['the summary']);
  });
});
