import { scripted, startFakeSearxng, startScriptedModel, type ScriptedModel } from '@mada/testkit';
import { afterEach, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../support/app.js';
import { sample, scrape } from '../support/metrics.js';

describe('the search engine gone', () => {
  let model: ScriptedModel;
  let t: TestApp;
  afterEach(async () => {
    await t.close();
    await model.close();
  });

  it('gives web_search its error text and the run carries on to its answer', async () => {
    const searxng = await startFakeSearxng();
    const gone = searxng.url;
    await searxng.close();
    model = await startScriptedModel({
      turns: [scripted.toolCalls({ name: 'web_search', arguments: { query: 'prometheus alert rules' } }), scripted.text('Search is down; here is what I know.')],
    });
    t = await createTestApp({ model: { url: model.url }, env: { SEARCH_ENGINE_URL: gone, SEARCH_ENGINE_TIMEOUT: '2' } });

    const response = await t.app.inject({ method: 'POST', url: '/agents/run', payload: { agent_type: 'task', prompt: 'Find alert rules', mode: 'auto_accept' } });
    expect(response.json()).toMatchObject({ success: true, response: 'Search is down; here is what I know.' });
    const toolResult = model.requests[1]?.messages.at(-1);
    expect(toolResult).toMatchObject({ role: 'tool' });
    expect(toolResult?.content).toMatch(/^Search request failed: .*ECONNREFUSED/);

    const metrics = await scrape(t.app);
    expect(sample(metrics, 'mada_tool_calls_total', { tool: 'web_search', outcome: 'error' })).toBe(1);
    expect(sample(metrics, 'mada_agent_runs_total', { agent: 'task', status: 'succeeded' })).toBe(1);
  });
});
