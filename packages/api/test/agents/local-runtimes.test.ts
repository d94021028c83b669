import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { scripted, startScriptedModel, type ScriptedModel, type ScriptedRuntime } from '@mada/testkit';
import { countTokens } from 'gpt-tokenizer/encoding/cl100k_base';
import { afterEach, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../support/app.js';
import { receivedTokens } from '../support/request-tokens.js';
import { parseFrames } from '../support/sse.js';

type Protocol = 'ollama' | 'openai';

let model: ScriptedModel | undefined;
let t: TestApp | undefined;

afterEach(async () => {
  await t?.close();
  await model?.close();
  t = undefined;
  model = undefined;
});

async function start(protocol: Protocol, runtime: ScriptedRuntime, env: Record<string, string> = {}): Promise<{ model: ScriptedModel; t: TestApp }> {
  model = await startScriptedModel({ runtime });
  t = await createTestApp({ model: { url: model.url, protocol }, env });
  return { model, t };
}

/** A window of `n` tokens as each protocol's runtime reports it. */
const windowOf = (protocol: Protocol, n: number): ScriptedRuntime => (protocol === 'ollama' ? { contextLength: n } : { maxModelLen: n });

const health = async (app: TestApp) => (await app.app.inject({ method: 'GET', url: '/health' })).json() as { model?: unknown };

describe.each(['ollama', 'openai'] as const)('a local runtime over %s', (protocol) => {
  it('keeps every model request of a run within a reported 4,096-token window, masking older results', async () => {
    const { model, t } = await start(protocol, windowOf(protocol, 4096));
    const big = join(t.workdir, 'big.txt');
    writeFileSync(big, Array.from({ length: 70 }, (_, i) => `line ${i}: some words that make this file long enough to matter`).join('\n'));
    const read = { name: 'read_file', arguments: { file_path: big } };
    model.push(scripted.toolCalls(read), scripted.toolCalls(read), scripted.toolCalls(read), scripted.toolCalls(read), scripted.text('done'));
    const frames = parseFrames((await t.app.inject({ method: 'POST', url: '/agents/stream', payload: { agent_type: 'explore', prompt: 'read it' } })).body);
    expect(frames.at(-1)).toEqual({ event: 'done', mode: 'default' });
    expect(model.requests).toHaveLength(5);
    for (const request of model.requests) {
      // The answer keeps a quarter of the window.
      expect(receivedTokens(request)).toBeLessThanOrEqual(4096 - 1024);
      if (protocol === 'ollama') expect(request.numCtx).toBe(4096);
    }
    const results = model.requests.at(-1)!.messages.filter((m) => m.role === 'tool').map((m) => m.content);
    expect(results[0]).toMatch(/^\[Output of read_file removed/);
    expect(results.at(-1)).toContain('line 69');
    expect(await health(t)).toMatchObject({ model: { name: 'qwen2.5-coder:7b', context_window: 4096, tool_calls: 'native' } });
  });

  it('fails a run whose request cannot fit the window, without sending it', async () => {
    const { model, t } = await start(protocol, windowOf(protocol, 1024));
    const response = await t.app.inject({ method: 'POST', url: '/agents/run', payload: { agent_type: 'explore', prompt: 'word '.repeat(2000) } });
    expect(response.json()).toMatchObject({
      success: false,
      error: expect.stringMatching(/^The request does not fit the model's context window: \d+ tokens needed, 768 available \(window 1024 tokens, 256 kept for the answer\)/),
    });
    expect(model.requests).toHaveLength(0);
  });

  it('uses LLM_NUM_CTX when it is smaller than what the runtime reports', async () => {
    const { t } = await start(protocol, windowOf(protocol, 131072), { LLM_NUM_CTX: '8192' });
    expect(await health(t)).toMatchObject({ model: { context_window: 8192 } });
  });

  it('falls back to tools described in the prompt when the runtime refuses tools for the model', async () => {
    const { model, t } = await start(protocol, { refuseTools: true });
    writeFileSync(join(t.workdir, 'a.ts'), 'export const a = 1;\n');
    model.push(scripted.textToolCalls('tagged', [{ name: 'read_file', arguments: { file_path: join(t.workdir, 'a.ts') } }]), scripted.text('a is 1'));
    const response = await t.app.inject({ method: 'POST', url: '/agents/run', payload: { agent_type: 'explore', prompt: 'what is a?' } });
    expect(response.json()).toMatchObject({ response: 'a is 1', success: true });
    const [refused, first, second] = model.requests;
    expect(refused?.tools.length).toBeGreaterThan(0);
    for (const request of [first, second]) {
      expect(request?.tools).toEqual([]);
      expect(request?.body.tools).toBeUndefined();
      expect(request?.messages[0]?.content).toContain('<tool_call>{"name":"TOOL_NAME"');
      expect(request?.messages[0]?.content).toContain('- read_file: ');
    }
    // The call and its result come back as text the model can read.
    expect(second?.messages.slice(-2)).toEqual([
      { role: 'assistant', content: `<tool_call>{"name":"read_file","arguments":{"file_path":"${join(t.workdir, 'a.ts')}"}}</tool_call>` },
      { role: 'user', content: '[Result of read_file]\n     1\texport const a = 1;' },
    ]);
    expect(await health(t)).toMatchObject({ model: { tool_calls: 'text' } });
  });

  it('reports per-run usage from the runtime, and from the tokenizer when the runtime gives none', async () => {
    for (const usage of [true, false]) {
      const { model: runtime, t: app } = await start(protocol, { usage });
      writeFileSync(join(app.workdir, 'a.ts'), 'export const a = 1;\n');
      runtime.push(scripted.toolCalls({ name: 'read_file', arguments: { file_path: join(app.workdir, 'a.ts') } }), scripted.text('the answer is one'));
      const signal = new AbortController().signal;
      const result = await app.engine.runWithUsage({ agentType: 'explore', prompt: 'what is a?', workingDir: '.', mode: 'default', signal, streaming: true });
      expect(result.text).toBe('the answer is one');
      expect(result.usage).toMatchObject({ model_calls: 2, tool_calls: 1 });
      if (usage) {
        // The scripted runtime reports ceil(length / 4) of the messages it received.
        const reported = runtime.requests.reduce((sum, r) => sum + Math.max(1, Math.ceil(JSON.stringify(r.body.messages).length / 4)), 0);
        expect(result.usage.input_tokens).toBe(reported);
      } else {
        const counted = runtime.requests.reduce((sum, r) => sum + receivedTokens(r), 0);
        expect(result.usage.input_tokens).toBeGreaterThan(counted * 0.8);
        expect(result.usage.input_tokens).toBeLessThan(counted * 1.2);
        expect(result.usage.output_tokens).toBeGreaterThan(countTokens('the answer is one'));
      }
      await app.close();
      await runtime.close();
      t = undefined;
      model = undefined;
    }
  });
});

describe('Ollama capabilities', () => {
  it('a model without the tools capability gets its tools in the prompt from the first request', async () => {
    const { model, t } = await start('ollama', { contextLength: 8192, capabilities: ['completion'] });
    model.push(scripted.textToolCalls('llama-function', [{ name: 'glob_files', arguments: { pattern: '*.ts' } }]), scripted.text('none found'));
    const frames = parseFrames((await t.app.inject({ method: 'POST', url: '/agents/stream', payload: { agent_type: 'explore', prompt: 'list' } })).body);
    expect(frames.find((f) => f.event === 'tool_start')).toMatchObject({ tool: 'glob_files', args: { pattern: '*.ts' } });
    expect(model.requests.every((r) => r.tools.length === 0)).toBe(true);
    expect(model.requests.map((r) => r.numCtx)).toEqual([8192, 8192]);
    expect(await health(t)).toMatchObject({ model: { context_window: 8192, tool_calls: 'text' } });
  });

  it('a model with the tools capability gets native tools', async () => {
    const { t } = await start('ollama', { contextLength: 16384, capabilities: ['completion', 'tools'] });
    expect(await health(t)).toMatchObject({ model: { context_window: 16384, tool_calls: 'native' } });
  });
});

describe('llama.cpp /props', () => {
  it("takes the server's n_ctx, not the model's training length", async () => {
    const { model, t } = await start('openai', { nCtx: 4096, maxModelLen: 32768 });
    expect(await health(t)).toMatchObject({ model: { context_window: 4096 } });
    expect(model.introspections).toEqual(['/v1/models', '/props']);
  });
});
