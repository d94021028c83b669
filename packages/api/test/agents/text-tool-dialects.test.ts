import { scripted, startScriptedModel, type ScriptedModel, type TextToolCallForm } from '@mada/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CALL_CORPUS, PROSE_CORPUS } from '../model/corpus/text-tool-calls.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { parseFrames } from '../support/sse.js';

/** Pieces of `size` characters: cuts fall inside markers, tags and JSON, as streamed tokens do. */
function pieces(text: string, size: number): string[] {
  const out: string[] = [];
  for (let at = 0; at < text.length; at += size) out.push(text.slice(at, at + size));
  return out;
}

const SIZES = [1, 3, 7, 11];

describe.each(['ollama', 'openai'] as const)('tool calls written as text, through a streamed run over %s', (protocol) => {
  let model: ScriptedModel;
  let t: TestApp;

  beforeAll(async () => {
    model = await startScriptedModel();
    t = await createTestApp({ model: { url: model.url, protocol } });
  });
  afterAll(async () => {
    await t.close();
    await model.close();
  });

  const stream = async (prompt: string) =>
    parseFrames((await t.app.inject({ method: 'POST', url: '/agents/stream', payload: { agent_type: 'explore', prompt } })).body);
  const streamedText = (frames: Record<string, unknown>[]) => frames.filter((f) => f.event === 'chunk').map((f) => String(f.data)).join('');

  it.each(CALL_CORPUS.map((entry, i) => [entry.dialect, i, entry] as const))('runs the calls of %s (#%i)', async (_dialect, i, entry) => {
    model.push(scripted.chunks(...pieces(entry.text, SIZES[i % SIZES.length]!)), scripted.text('finished'));
    const frames = await stream('search the code');
    const started = frames.filter((f) => f.event === 'tool_start').map((f) => ({ tool: f.tool, pattern: (f.args as { pattern?: unknown }).pattern }));
    expect(started).toEqual(entry.calls.map((call) => ({ tool: call.name, pattern: call.arguments.pattern })));
    expect(frames.filter((f) => f.event === 'tool_done')).toHaveLength(entry.calls.length);
    const text = streamedText(frames);
    expect(text.endsWith('finished')).toBe(true);
    // Neither the calls nor the reasoning reach the user as answer text.
    for (const call of entry.calls) expect(text).not.toContain(call.name);
    // The results went back to the model, one per call.
    const results = model.requests.at(-1)!.messages.filter((m) => m.role === 'tool');
    expect(results.slice(-entry.calls.length)).toHaveLength(entry.calls.length);
    expect(frames.at(-1)).toEqual({ event: 'done', mode: 'default' });
  });

  it.each(PROSE_CORPUS.map((text, i) => [text.slice(0, 30), i, text] as const))('streams prose as it is: %s', async (_start, i, text) => {
    model.push(scripted.chunks(...pieces(text, SIZES[i % SIZES.length]!)));
    const frames = await stream('explain');
    expect(frames.filter((f) => f.event === 'tool_start')).toEqual([]);
    expect(streamedText(frames)).toBe(text);
  });

  const FORMS: TextToolCallForm[] = ['json', 'fenced', 'tagged', 'llama-function', 'python-tag', 'mistral', 'deepseek', 'gpt-oss'];

  it.each(FORMS)('runs two calls the scripted model writes in the %s dialect, streamed and not', async (form) => {
    const calls = [
      { name: 'glob_files', arguments: { pattern: '*.md' } },
      { name: 'grep_content', arguments: { pattern: 'TODO' } },
    ];
    model.push(scripted.textToolCalls(form, calls, { before: 'Searching.' }), scripted.text('finished'));
    const frames = await stream('search');
    expect(frames.filter((f) => f.event === 'tool_start').map((f) => f.tool)).toEqual(['glob_files', 'grep_content']);
    model.push(scripted.textToolCalls(form, calls), scripted.text('finished'));
    const run = await t.app.inject({ method: 'POST', url: '/agents/run', payload: { agent_type: 'explore', prompt: 'search' } });
    expect(run.json()).toMatchObject({ response: 'finished', success: true });
    expect(model.requests.at(-1)!.messages.filter((m) => m.role === 'tool')).toHaveLength(2);
  });

  it('never streams or returns reasoning as the answer', async () => {
    model.push(scripted.chunks('<thi', 'nk>the user wants ', 'a secret plan</th', 'ink>\n\nThe answer', ' is 42.'));
    const frames = await stream('what is it');
    expect(streamedText(frames)).toBe('The answer is 42.');
    model.push(scripted.chunks('<think>hidden', ' reasoning</think>Visible.'));
    const run = await t.app.inject({ method: 'POST', url: '/agents/run', payload: { agent_type: 'explore', prompt: 'what' } });
    expect(run.json()).toMatchObject({ response: 'Visible.', success: true });
  });
});
