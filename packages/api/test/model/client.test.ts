import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { scripted, startScriptedModel, type ScriptedModel, type ScriptStep } from '@mada/testkit';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { createModelClient, describeTool, ModelError, type ModelClient, type ModelRequest, type ModelSettings, type ModelStreamPart } from '../../src/model/index.js';
import { modelSettings, type Provider } from './model-settings.js';

const readFile = describeTool({
  name: 'read_file',
  description: 'Read a file',
  parameters: z.object({ file_path: z.string(), limit: z.number().int().default(2000) }),
});

const ask = (content = 'What is in a.ts?'): ModelRequest => ({ messages: [{ role: 'user', content }], tools: [readFile] });

async function collect(parts: AsyncIterable<ModelStreamPart>): Promise<ModelStreamPart[]> {
  const out: ModelStreamPart[] = [];
  for await (const part of parts) out.push(part);
  return out;
}

/** Settles to 'pending' if the promise has not settled after `ms`. */
const stateAfter = <T>(promise: Promise<T>, ms: number): Promise<T | 'pending'> =>
  Promise.race([promise, new Promise<'pending'>((resolve) => setTimeout(() => resolve('pending'), ms))]);

const never = new Promise<never>(() => undefined);

let model: ScriptedModel | undefined;
afterEach(async () => {
  await model?.close();
  model = undefined;
});

describe.each<Provider>(['ollama', 'openai'])('model client on %s', (provider) => {
  async function setup(turns: ScriptStep[], overrides: Partial<ModelSettings> = {}): Promise<{ runtime: ScriptedModel; client: ModelClient }> {
    const runtime = await startScriptedModel({ turns });
    model = runtime;
    return { runtime, client: createModelClient(modelSettings(runtime, provider, overrides)) };
  }

  describe('complete', () => {
    it('returns the text, finish reason and usage, in one non-streaming request', async () => {
      const { runtime, client } = await setup([scripted.text('The file exports one function.')]);
      const response = await client.complete(ask());
      expect(response.text).toBe('The file exports one function.');
      expect(response.toolCalls).toEqual([]);
      expect(response.finishReason).toBe('stop');
      expect(response.usage.input_tokens).toBeGreaterThan(0);
      expect(response.usage.output_tokens).toBeGreaterThan(0);
      expect(runtime.requests[0]?.stream).toBe(false);
    });

    it('returns tool calls with ids and parsed arguments', async () => {
      const { client } = await setup([
        scripted.toolCallsAfterText('Let me look.', { name: 'read_file', arguments: { file_path: '/w/a.ts' }, id: 'c1' }, { name: 'read_file', arguments: { file_path: '/w/b.ts', limit: 5 } }),
      ]);
      const response = await client.complete(ask());
      expect(response.text).toBe('Let me look.');
      expect(response.finishReason).toBe('tool-calls');
      expect(response.toolCalls.map(({ name, arguments: args }) => ({ name, args }))).toEqual([
        { name: 'read_file', args: { file_path: '/w/a.ts' } },
        { name: 'read_file', args: { file_path: '/w/b.ts', limit: 5 } },
      ]);
      expect(response.toolCalls[0]?.id).toBe('c1');
      expect(response.toolCalls[1]?.id).toEqual(expect.any(String));
      expect(response.toolCalls[1]?.argumentsError).toBeUndefined();
    });

    it('passes a call to a tool that was not offered through as it is, for the engine to answer', async () => {
      const { client } = await setup([scripted.toolCalls({ name: 'delete_everything', arguments: { now: true } })]);
      const response = await client.complete(ask());
      expect(response.toolCalls).toMatchObject([{ name: 'delete_everything', arguments: { now: true } }]);
    });
  });

  describe('what the runtime is sent', () => {
    const history: ModelRequest = {
      messages: [
        { role: 'system', content: 'You are explore.' },
        { role: 'user', content: 'Read a.ts' },
        { role: 'assistant', content: 'Reading.', toolCalls: [{ id: 'call_a', name: 'read_file', arguments: { file_path: '/w/a.ts' } }] },
        { role: 'tool', toolCallId: 'call_a', toolName: 'read_file', content: '     1\texport const a = 1;' },
        { role: 'assistant', content: '', toolCalls: [{ id: 'call_b', name: 'read_file', arguments: '{"file_path": ' }] },
        { role: 'tool', toolCallId: 'call_b', toolName: 'read_file', content: 'Error: arguments were not valid JSON' },
      ],
      tools: [readFile],
    };

    it('sends the messages in order, with tool calls and tool results tied by id', async () => {
      const { runtime, client } = await setup([scripted.text('done')]);
      await client.complete(history);
      const sent = runtime.requests[0]?.messages ?? [];
      expect(sent.map((m) => m.role)).toEqual(['system', 'user', 'assistant', 'tool', 'assistant', 'tool']);
      expect(sent[0]?.content).toBe('You are explore.');
      expect(sent[2]).toMatchObject({ content: 'Reading.', toolCalls: [{ id: 'call_a', name: 'read_file', arguments: { file_path: '/w/a.ts' } }] });
      expect(sent[3]).toMatchObject({ toolCallId: 'call_a', content: '     1\texport const a = 1;' });
      // Non-object arguments go back as {}: Ollama refuses a history with anything else.
      expect(sent[4]?.toolCalls?.[0]?.arguments).toEqual({});
    });

    it('sends the tools as JSON Schema, the model name, and the temperature where the runtime reads it', async () => {
      const { runtime, client } = await setup([scripted.text('ok')]);
      await client.complete(ask());
      const request = runtime.requests[0];
      expect(request?.model).toBe('qwen2.5-coder:7b');
      expect(request?.temperature).toBe(0.3);
      expect(request?.tools).toEqual([
        {
          name: 'read_file',
          description: 'Read a file',
          parameters: {
            type: 'object',
            properties: { file_path: { type: 'string' }, limit: { type: 'integer', default: 2000, minimum: expect.any(Number), maximum: expect.any(Number) } },
            required: ['file_path'],
          },
        },
      ]);
    });

    it(provider === 'ollama' ? 'asks Ollama for LLM_NUM_CTX in options.num_ctx' : 'sends no Ollama options', async () => {
      const { runtime, client } = await setup([scripted.text('ok')], { llmNumCtx: 8192 });
      await client.complete(ask());
      expect(runtime.requests[0]?.numCtx).toBe(provider === 'ollama' ? 8192 : undefined);
    });

    it('sends LLM_API_KEY as a Bearer token, and no Authorization header without one', async () => {
      const { runtime, client } = await setup([scripted.text('ok')], { llmApiKey: 'sk-local-123' });
      await client.complete(ask());
      expect(runtime.requests[0]?.headers.authorization).toBe('Bearer sk-local-123');
      const anonymous = createModelClient(modelSettings(runtime, provider));
      runtime.push(scripted.text('ok'));
      await anonymous.complete(ask());
      expect(runtime.requests[1]?.headers.authorization).toBeUndefined();
    });

    it('uses the configured temperature', async () => {
      const { runtime, client } = await setup([scripted.text('ok')], { llmTemperature: 0.7 });
      await collect(client.stream(ask()));
      expect(runtime.requests[0]?.temperature).toBe(0.7);
      expect(runtime.requests[0]?.stream).toBe(true);
    });
  });

  describe('stream', () => {
    it('yields text deltas in order as separate parts, then a finish with the whole response', async () => {
      const { client } = await setup([scripted.chunks('The ', 'file ', 'is ', 'short.')]);
      const parts = await collect(client.stream(ask()));
      expect(parts.slice(0, -1)).toEqual(['The ', 'file ', 'is ', 'short.'].map((text) => ({ type: 'text', text })));
      expect(parts.at(-1)).toMatchObject({ type: 'finish', response: { text: 'The file is short.', toolCalls: [], finishReason: 'stop' } });
    });

    it('gives back a long answer of many small deltas whole and in order in the finish', async () => {
      // Hundreds of tokens, as a small model streams a long answer: more than one block of the
      // kept text, with characters outside ASCII and a last block left unfinished.
      const deltas = Array.from({ length: 1000 }, (_, i) => (i % 7 === 0 ? `é${i}\u2581` : `t${i} `));
      const { client } = await setup([scripted.chunks(...deltas)]);
      const parts = await collect(client.stream(ask()));
      expect(parts.filter((p) => p.type === 'text').map((p) => p.text)).toEqual(deltas);
      const finish = parts.at(-1);
      expect(finish?.type === 'finish' && finish.response.text).toBe(deltas.join(''));
    });

    it('delivers the first delta while the runtime still holds back the rest', async () => {
      let release = (): void => undefined;
      const released = new Promise<void>((resolve) => (release = resolve));
      const { client } = await setup([scripted.chunks('Hel', scripted.until(released), 'lo')]);
      const parts = client.stream(ask())[Symbol.asyncIterator]();
      expect(await parts.next()).toEqual({ done: false, value: { type: 'text', text: 'Hel' } });
      const second = parts.next();
      expect(await stateAfter(second, 100)).toBe('pending');
      release();
      expect(await second).toEqual({ done: false, value: { type: 'text', text: 'lo' } });
      expect((await parts.next()).value).toMatchObject({ type: 'finish' });
    });

    it('yields tool calls with parsed arguments after the text, and usage in the finish', async () => {
      const { client } = await setup([scripted.toolCallsAfterText('Reading both.', { name: 'read_file', arguments: { file_path: '/w/a.ts' } }, { name: 'glob_files', arguments: { pattern: '**/*.ts' } })]);
      const parts = await collect(client.stream(ask()));
      expect(parts.map((p) => p.type)).toEqual(['text', 'tool-call', 'tool-call', 'finish']);
      const calls = parts.flatMap((p) => (p.type === 'tool-call' ? [p.call] : []));
      expect(calls.map((c) => [c.name, c.arguments])).toEqual([
        ['read_file', { file_path: '/w/a.ts' }],
        ['glob_files', { pattern: '**/*.ts' }],
      ]);
      const finish = parts.at(-1);
      expect(finish?.type === 'finish' && finish.response).toMatchObject({ text: 'Reading both.', finishReason: 'tool-calls', toolCalls: calls });
      expect(finish?.type === 'finish' && finish.response.usage.output_tokens).toBeGreaterThan(0);
    });

    it('closes the connection when the consumer stops reading', async () => {
      const { runtime, client } = await setup([scripted.chunks('first', scripted.until(never), 'never sent')]);
      for await (const part of client.stream(ask())) {
        expect(part).toEqual({ type: 'text', text: 'first' });
        break;
      }
      expect(await runtime.requests[0]?.outcome).toBe('client-closed');
    });
  });

  describe('aborting', () => {
    it('stops a stream mid-answer with the abort reason, and the runtime sees the connection close', async () => {
      const { runtime, client } = await setup([scripted.chunks('partial', scripted.until(never), 'rest')]);
      const controller = new AbortController();
      const reason = new Error('client went away');
      const parts = client.stream(ask(), controller.signal)[Symbol.asyncIterator]();
      expect((await parts.next()).value).toEqual({ type: 'text', text: 'partial' });
      const next = parts.next();
      controller.abort(reason);
      await expect(next).rejects.toBe(reason);
      expect(await runtime.requests[0]?.outcome).toBe('client-closed');
    });

    it('stops a waiting non-streaming call', async () => {
      const { runtime, client } = await setup([scripted.stall()]);
      const controller = new AbortController();
      const call = client.complete(ask(), controller.signal);
      await expect.poll(() => runtime.requests.length).toBe(1);
      controller.abort(new Error('cancelled'));
      await expect(call).rejects.toThrow('cancelled');
      expect(await runtime.requests[0]?.outcome).toBe('client-closed');
    });

    it('does not call the runtime at all with an already aborted signal', async () => {
      const { runtime, client } = await setup([scripted.text('unused')]);
      await expect(client.complete(ask(), AbortSignal.abort(new Error('too late')))).rejects.toThrow('too late');
      await expect(collect(client.stream(ask(), AbortSignal.abort(new Error('too late'))))).rejects.toThrow('too late');
      expect(runtime.requests).toHaveLength(0);
    });
  });

  describe('timeouts', () => {
    it('gives up on a runtime that does not answer within LLM_TIMEOUT_SECONDS, without retrying', async () => {
      const { runtime, client } = await setup([scripted.stall(), scripted.text('unused')], { llmTimeoutSeconds: 0.2 });
      const error = await client.complete(ask()).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ModelError);
      expect(error).toMatchObject({ kind: 'timeout', message: expect.stringContaining('within 0.2 s') });
      expect(runtime.requests).toHaveLength(1);
      expect(await runtime.requests[0]?.outcome).toBe('client-closed');
    });

    it('times out a stream that stalls after its first delta', async () => {
      const { client } = await setup([scripted.chunks('slow', scripted.until(never))], { llmTimeoutSeconds: 0.2 });
      const parts = client.stream(ask())[Symbol.asyncIterator]();
      expect((await parts.next()).value).toEqual({ type: 'text', text: 'slow' });
      await expect(parts.next()).rejects.toMatchObject({ name: 'ModelError', kind: 'timeout' });
    });

    it('accepts an answer that arrives late but within the timeout', async () => {
      const { client } = await setup([scripted.delayed(100, scripted.text('late but fine'))], { llmTimeoutSeconds: 2 });
      expect((await client.complete(ask())).text).toBe('late but fine');
    });
  });

  describe('retries', () => {
    it('retries a 5xx answer and returns the answer that follows', async () => {
      const retries: number[] = [];
      const runtime = await startScriptedModel({ turns: [scripted.httpError(503, 'loading model'), scripted.httpError(500), scripted.text('ready')] });
      model = runtime;
      const client = createModelClient(modelSettings(runtime, provider), { onRetry: (error, attempt) => retries.push(error.status ?? 0, attempt) });
      expect((await client.complete(ask())).text).toBe('ready');
      expect(runtime.requests).toHaveLength(3);
      expect(retries).toEqual([503, 1, 500, 2]);
    });

    it('retries a stream that failed before any output', async () => {
      const { runtime, client } = await setup([scripted.httpError(502), scripted.drop(), scripted.chunks('after ', 'retries')]);
      const parts = await collect(client.stream(ask()));
      expect(parts.filter((p) => p.type === 'text').map((p) => p.text)).toEqual(['after ', 'retries']);
      expect(runtime.requests).toHaveLength(3);
    });

    it('does not retry a stream that broke after output was delivered', async () => {
      const { runtime, client } = await setup([scripted.drop('partial answer'), scripted.text('unused')]);
      const parts = client.stream(ask())[Symbol.asyncIterator]();
      expect((await parts.next()).value).toEqual({ type: 'text', text: 'partial answer' });
      await expect(parts.next()).rejects.toMatchObject({ name: 'ModelError', kind: 'disconnected' });
      expect(runtime.requests).toHaveLength(1);
      expect(await runtime.requests[0]?.outcome).toBe('dropped');
    });

    it('reports the last HTTP status and the runtime message once attempts run out', async () => {
      const { runtime, client } = await setup([scripted.httpError(503, 'out of memory'), scripted.httpError(503, 'out of memory'), scripted.httpError(503, 'still out of memory')]);
      const error = await client.complete(ask()).catch((e: unknown) => e);
      expect(error).toMatchObject({ name: 'ModelError', kind: 'http', status: 503 });
      expect((error as Error).message).toMatch(/HTTP 503 at http:\/\/127\.0\.0\.1:\d+\/.*: still out of memory/);
      expect(runtime.requests).toHaveLength(3);
    });

    it('does not retry a 400', async () => {
      const { runtime, client } = await setup([scripted.httpError(400, 'bad tool schema'), scripted.text('unused')]);
      await expect(client.complete(ask())).rejects.toMatchObject({ kind: 'http', status: 400, message: expect.stringContaining('bad tool schema') });
      expect(runtime.requests).toHaveLength(1);
    });

    it('fails loudly when the test script runs out', async () => {
      const { client } = await setup([], { retryMaxAttempts: 1 });
      await expect(client.complete(ask())).rejects.toThrow(/script exhausted: request #1/);
    });
  });

  describe('errors', () => {
    it('names the URL of an unreachable runtime', async () => {
      const runtime = await startScriptedModel();
      const settings = modelSettings(runtime, provider, { retryMaxAttempts: 2 });
      await runtime.close();
      const error = await createModelClient(settings).complete(ask()).catch((e: unknown) => e);
      expect(error).toMatchObject({ name: 'ModelError', kind: 'unreachable' });
      expect((error as Error).message).toContain(`Model runtime unreachable at ${settings.llmBaseUrl}`);
    });

    it('does not follow a redirect: the prompt goes to LLM_BASE_URL and nowhere else', async () => {
      const { runtime } = await setup([scripted.text('unused')]);
      const target = provider === 'ollama' ? runtime.url : runtime.openaiUrl;
      // A runtime address that sends every request on to the scripted model, body and all (307).
      const redirecting = createServer((request, response) => {
        request.resume();
        response.writeHead(307, { location: `${target}${request.url?.replace(/^\/v1/, '') ?? ''}` }).end();
      });
      await new Promise<void>((resolve) => redirecting.listen(0, '127.0.0.1', resolve));
      try {
        const { port } = redirecting.address() as AddressInfo;
        const llmBaseUrl = provider === 'ollama' ? `http://127.0.0.1:${port}` : `http://127.0.0.1:${port}/v1`;
        const client = createModelClient(modelSettings(runtime, provider, { llmBaseUrl }));
        for (const call of [client.complete(ask('the secret plan')), collect(client.stream(ask('the secret plan')))]) {
          const error = await call.catch((e: unknown) => e);
          expect(error).toMatchObject({ name: 'ModelError', kind: 'http', retryable: false });
          expect((error as Error).message).toBe(
            `The model runtime at ${llmBaseUrl} answered with a redirect, which model calls do not follow: set LLM_BASE_URL to the address that serves the model`,
          );
        }
        expect(runtime.requests).toEqual([]);
      } finally {
        redirecting.close();
      }
    });

    it('says which model was not found', async () => {
      const runtime = await startScriptedModel({ models: ['llama3.1:8b'], turns: [scripted.text('unused')] });
      model = runtime;
      const client = createModelClient(modelSettings(runtime, provider, { llmModel: 'qwen2.5-coder:32b' }));
      const error = await client.complete(ask()).catch((e: unknown) => e);
      expect(error).toMatchObject({ name: 'ModelError', kind: 'model-not-found', status: 404 });
      expect((error as Error).message).toContain('Model "qwen2.5-coder:32b" not found');
      if (provider === 'ollama') expect((error as Error).message).toContain('ollama pull qwen2.5-coder:32b');
      expect(runtime.requests).toHaveLength(1);
    });
  });
});

describe('protocol differences', () => {
  it('on OpenAI, keeps malformed arguments on the call with a readable error', async () => {
    model = await startScriptedModel({ turns: [scripted.malformedArguments('read_file', '{"file_path": "/w/a.ts"'), scripted.malformedArguments('read_file', '["a"]')] });
    const client = createModelClient(modelSettings(model, 'openai'));
    const [broken] = (await client.complete(ask())).toolCalls;
    expect(broken).toMatchObject({ name: 'read_file', arguments: {}, rawArguments: '{"file_path": "/w/a.ts"', argumentsError: expect.stringContaining('not valid JSON') });
    const parts = await collect(client.stream(ask()));
    const call = parts.find((p) => p.type === 'tool-call');
    expect(call?.type === 'tool-call' && call.call.argumentsError).toContain('must be a JSON object');
  });

  it('repeats at most the start of refused arguments in their error, not all of a huge answer', async () => {
    const huge = `{"file_path": "${'x'.repeat(1_000_000)}`;
    model = await startScriptedModel({ turns: [scripted.malformedArguments('read_file', huge)] });
    const [broken] = (await createModelClient(modelSettings(model, 'openai')).complete(ask())).toolCalls;
    expect(broken?.argumentsError).toMatch(/^The arguments are not valid JSON \(.*\): \{"file_path": "x{1985}\.\.\. \(1000015 characters in all\)$/);
  });

  it('on Ollama, a call the runtime could not parse arrives as text', async () => {
    model = await startScriptedModel({ turns: [scripted.malformedArguments('read_file', '{"file_path": ')] });
    const response = await createModelClient(modelSettings(model, 'ollama')).complete(ask());
    expect(response.toolCalls).toEqual([]);
    expect(response.text).toBe('{"name": "read_file", "arguments": {"file_path": }');
  });

  it.each<Provider>(['ollama', 'openai'])('on %s, an error reported mid-stream fails the stream after the text already delivered', async (provider) => {
    // The Ollama provider logs the error line it cannot parse, then drops it.
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => undefined);
    model = await startScriptedModel({ turns: [scripted.streamError('CUDA out of memory', 'half an ', 'answer'), scripted.text('unused')] });
    const parts = createModelClient(modelSettings(model, provider)).stream(ask())[Symbol.asyncIterator]();
    expect((await parts.next()).value).toEqual({ type: 'text', text: 'half an ' });
    expect((await parts.next()).value).toEqual({ type: 'text', text: 'answer' });
    const error = await parts.next().catch((e: unknown) => e);
    expect(error).toMatchObject({ name: 'ModelError', kind: 'interrupted' });
    // The Ollama provider drops the error line, so only the OpenAI path can quote it.
    if (provider === 'openai') expect((error as Error).message).toContain('CUDA out of memory');
    else expect(warn).toHaveBeenCalled();
    expect(model.requests).toHaveLength(1);
    warn.mockRestore();
  });
});

