import { scripted, startScriptedModel, type ScriptedModel } from '@mada/testkit';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SUMMARY_INSTRUCTION } from '../../src/conversations/summarizer.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { DIALECTS } from '../support/databases.js';

/** n tokens of text: "word" then " word" each count one cl100k token. */
const words = (n: number, word: string) => [word, ...Array.from({ length: n - 1 }, () => ` ${word}`)].join('');

/** Two stored exchanges of 40 tokens fill a 50-token window past 0.8: the next turn summarizes first. */
const SMALL_WINDOW = { MAX_CONTEXT_TOKENS: '50', SUMMARIZATION_THRESHOLD: '0.8', KEEP_RECENT_MESSAGES: '2', RETRY_MAX_ATTEMPTS: '1' };

describe.each(DIALECTS)('a conversation turn as a run on %s', (dialect) => {
  let model: ScriptedModel;
  let t: TestApp;

  beforeEach(async () => {
    model = await startScriptedModel();
    t = await createTestApp({ dialect, model: { url: model.url }, env: SMALL_WINDOW });
  });
  afterEach(async () => {
    await t.close();
    await model.close();
  });

  /** A conversation whose next turn must summarize. */
  const fullConversation = async (): Promise<string> => {
    const id = (await t.app.inject({ method: 'POST', url: '/conversations/', payload: { agent_type: 'explore' } })).json<{ id: string }>().id;
    for (const [user, assistant] of [
      ['alpha', 'beta'],
      ['gamma', 'delta'],
    ] as const) {
      await t.app.inject({ method: 'POST', url: `/conversations/${id}/save`, payload: { user_content: words(10, user), assistant_content: words(10, assistant) } });
    }
    return id;
  };
  const startTurn = (id: string, content: string) => t.app.inject({ method: 'POST', url: `/conversations/${id}/runs`, payload: { content } });
  const runOf = async (runId: string) => (await t.app.inject({ url: `/runs/${runId}` })).json<{ status: string; usage: Record<string, number> }>();
  const roles = async (id: string) => (await t.database.repository.messagesAfter(id, 0, 100)).map((m) => m.role);

  it('answers 202 before summarizing, and POST /runs/{id}/cancel stops the summarization', async () => {
    const id = await fullConversation();
    model.push(scripted.stall());
    const started = await startTurn(id, words(5, 'eps'));
    expect(started.statusCode).toBe(202);
    const runId = started.json<{ id: string }>().id;
    await expect.poll(() => model.requests.length).toBe(1);
    expect(model.requests[0]?.messages.find((m) => m.role === 'user')?.content).toContain(SUMMARY_INSTRUCTION);

    // The summarizing turn holds the conversation: a second is refused at once, and stores nothing.
    const second = await startTurn(id, 'meanwhile');
    expect(second.statusCode).toBe(409);
    expect(second.json()).toEqual({ detail: 'Conversation is busy' });

    expect((await t.app.inject({ method: 'POST', url: `/runs/${runId}/cancel` })).statusCode).toBe(202);
    expect(await model.requests[0]!.outcome).toBe('client-closed');
    await expect.poll(async () => (await runOf(runId)).status).toBe('cancelled');
    // No fallback summary stored as if the model had failed, no agent call, no answer.
    expect(model.requests).toHaveLength(1);
    expect(await roles(id)).toEqual(['user', 'assistant', 'user', 'assistant', 'user']);
  });

  it("counts the summarization's model call in the run's usage", async () => {
    const id = await fullConversation();
    model.push(scripted.text('Summary one'), scripted.text('The answer'));
    const runId = (await startTurn(id, words(5, 'eps'))).json<{ id: string }>().id;
    await expect.poll(async () => (await runOf(runId)).status).toBe('succeeded');
    const { usage } = await runOf(runId);
    expect(model.requests).toHaveLength(2);
    expect(usage.model_calls).toBe(2);
    expect(usage.input_tokens).toBeGreaterThan(0);
    expect(await roles(id)).toEqual(['user', 'assistant', 'user', 'assistant', 'user', 'summary', 'assistant']);
  });
});
