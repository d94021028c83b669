import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { scripted, startScriptedModel, type ScriptedModel } from '@mada/testkit';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../support/app.js';
import { parseFrames } from '../support/sse.js';

let model: ScriptedModel;
let t: TestApp;
beforeEach(async () => {
  model = await startScriptedModel();
});
afterEach(async () => {
  await t.close();
  await model.close();
});

const stream = async (body: object) => parseFrames((await t.app.inject({ method: 'POST', url: '/agents/stream', payload: body })).body);
const toolResult = (request: number) => model.requests[request]?.messages.at(-1)?.content;

describe('spawn_agent', () => {
  beforeEach(async () => {
    t = await createTestApp({ model: { url: model.url } });
  });

  it('runs an explore sub-agent and hands its answer back, with the prompt cut to 50 characters in tool_start', async () => {
    const prompt = 'Find every place where the configuration file is parsed and list them';
    model.push(
      scripted.toolCalls({ name: 'spawn_agent', arguments: { agent_type: 'explore', prompt } }),
      scripted.text('Parsed in src/config.ts'),
      scripted.text('Done. ## Summary ...'),
    );
    const frames = await stream({ agent_type: 'task', prompt: 'Investigate config parsing', mode: 'plan' });
    expect(frames[0]).toEqual({ event: 'tool_start', tool: 'spawn_agent', args: { agent_type: 'explore', prompt: `${prompt.slice(0, 50)}...` } });
    expect(frames[1]).toEqual({ event: 'tool_done', tool: 'spawn_agent', result_summary: 'Parsed in src/config.ts', outcome: 'ok' });
    expect(model.requests[1]?.messages[0]?.content).toMatch(/^You are explore/);
    expect(model.requests[1]?.messages[1]?.content).toBe(prompt);
    expect(toolResult(2)).toBe('Parsed in src/config.ts');
    expect(frames.at(-1)).toEqual({ event: 'done', mode: 'plan' });
  });

  it.each([
    ['task', 'Error: Cannot spawn nested Task agents (recursion risk)'],
    ['wizard', "Error: Unknown agent type 'wizard'. Allowed: ['explore', 'plan']"],
  ])('refuses agent_type %s with the contract message', async (agentType, message) => {
    model.push(scripted.toolCalls({ name: 'spawn_agent', arguments: { agent_type: agentType, prompt: 'x' } }), scripted.text('ok'));
    await stream({ agent_type: 'task', prompt: 'go', mode: 'plan' });
    expect(toolResult(1)).toBe(message);
  });

  it('reports a failing sub-agent as Sub-agent error', async () => {
    await t.close();
    t = await createTestApp({ model: { url: model.url }, env: { RETRY_MAX_ATTEMPTS: '1' } });
    model.push(
      scripted.toolCalls({ name: 'spawn_agent', arguments: { agent_type: 'plan', prompt: 'design it' } }),
      scripted.httpError(400, 'sub-agent model broke'),
      scripted.text('I could not plan.'),
    );
    await stream({ agent_type: 'task', prompt: 'go', mode: 'plan' });
    expect(toolResult(2)).toMatch(/^Sub-agent error: .*sub-agent model broke/);
  });
});

describe('observation masking', () => {
  it('replaces older tool results with a placeholder when the run nears LLM_NUM_CTX, and says so', async () => {
    t = await createTestApp({ model: { url: model.url }, env: { LLM_NUM_CTX: '5000' } });
    const big = join(t.workdir, 'big.txt');
    writeFileSync(big, Array.from({ length: 120 }, (_, i) => `line ${i} of a long file with some words`).join('\n'));
    const read = { name: 'read_file', arguments: { file_path: big } };
    model.push(scripted.toolCalls(read), scripted.toolCalls(read), scripted.toolCalls(read), scripted.toolCalls(read), scripted.text('done'));
    const frames = await stream({ agent_type: 'explore', prompt: 'read it a lot' });
    const last = model.requests.at(-1)!;
    const results = last.messages.filter((m) => m.role === 'tool').map((m) => m.content);
    expect(results).toHaveLength(4);
    expect(results[0]).toBe('[Output of read_file removed to keep the context window small. Call the tool again if you need it.]');
    expect(results.at(-1)).toContain('line 119 of a long file');
    expect(frames.some((f) => f.event === 'thinking' && String(f.message).startsWith('Context window nearly full'))).toBe(true);
  });
});
