import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { scripted, startScriptedModel, type ScriptedModel } from '@mada/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_CALLS_PER_ANSWER } from '../../src/agents/run-loop.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { parseFrames } from '../support/sse.js';

/**
 * One answer may hold thousands of calls (a hostile repository can steer a model into writing
 * them, 15,000 fit in a megabyte of text); every result would stay in the run's memory.
 */
describe('tool calls in one answer', () => {
  let model: ScriptedModel;
  let t: TestApp;

  beforeAll(async () => {
    model = await startScriptedModel();
    t = await createTestApp({ model: { url: model.url } });
    writeFileSync(join(t.workdir, 'a.txt'), 'needle\n');
  });
  afterAll(async () => {
    await t.close();
    await model.close();
  });

  const calls = (count: number) => Array.from({ length: count }, () => ({ name: 'grep_content', arguments: { pattern: 'needle' } }));

  it('runs the first ones and answers the rest with an error the model can act on', async () => {
    const count = MAX_CALLS_PER_ANSWER + 5;
    model.push(scripted.toolCalls(...calls(count)), scripted.text('finished'));
    const frames = parseFrames((await t.app.inject({ method: 'POST', url: '/agents/stream', payload: { agent_type: 'explore', prompt: 'search' } })).body);
    expect(frames.filter((f) => f.event === 'tool_start')).toHaveLength(MAX_CALLS_PER_ANSWER);
    expect(frames.some((f) => f.event === 'thinking' && String(f.message).includes(`${count} tool calls`))).toBe(true);
    const results = model.requests.at(-1)!.messages.filter((m) => m.role === 'tool').map((m) => m.content);
    expect(results).toHaveLength(count);
    expect(results.slice(0, MAX_CALLS_PER_ANSWER).every((r) => r.includes('needle'))).toBe(true);
    expect(results.slice(MAX_CALLS_PER_ANSWER)).toEqual(
      Array.from({ length: 5 }, () => `Error: Not run: ${count} tool calls in one answer, and at most ${MAX_CALLS_PER_ANSWER} are run. Ask for the rest in your next answer.`),
    );
    expect(frames.at(-1)).toEqual({ event: 'done', mode: 'default' });
  });

  it('runs every call of an answer within the limit', async () => {
    model.push(scripted.toolCalls(...calls(MAX_CALLS_PER_ANSWER)), scripted.text('finished'));
    const frames = parseFrames((await t.app.inject({ method: 'POST', url: '/agents/stream', payload: { agent_type: 'explore', prompt: 'search' } })).body);
    expect(frames.filter((f) => f.event === 'tool_start')).toHaveLength(MAX_CALLS_PER_ANSWER);
    expect(frames.some((f) => f.event === 'thinking')).toBe(false);
  });
});
