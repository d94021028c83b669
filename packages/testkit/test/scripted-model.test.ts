import { afterEach, describe, expect, it } from 'vitest';
import { scripted, startScriptedModel, type ScriptedModel, type ScriptStep } from '../src/index.js';

type Json = Record<string, unknown>;

/** A value deep in a wire payload: `at(body, 'choices', 0, 'message')`. */
function at(value: unknown, ...path: (string | number)[]): unknown {
  let current = value;
  for (const key of path) current = typeof current === 'object' && current !== null ? (current as Record<string | number, unknown>)[key] : undefined;
  return current;
}

let model: ScriptedModel | undefined;
afterEach(async () => {
  await model?.close();
  model = undefined;
});

async function start(turns: ScriptStep[], options: { models?: string[]; zeroLatency?: boolean } = {}): Promise<ScriptedModel> {
  model = await startScriptedModel({ turns, ...options });
  return model;
}

const OLLAMA = '/api/chat';
const OPENAI = '/v1/chat/completions';
const userMessage = [{ role: 'user', content: 'hi' }];

function post(runtime: ScriptedModel, path: string, body: Json, signal?: AbortSignal): Promise<Response> {
  return fetch(`${runtime.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body), ...(signal ? { signal } : {}) });
}

const ollamaLines = async (response: Response): Promise<Json[]> =>
  (await response.text())
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as Json);

/** The `data:` payloads of an SSE body; `[DONE]` kept as a string. */
async function sseData(response: Response): Promise<(Json | string)[]> {
  const text = await response.text();
  return text
    .split('\n\n')
    .filter((event) => event.startsWith('data: '))
    .map((event) => event.slice('data: '.length))
    .map((data) => (data === '[DONE]' ? data : (JSON.parse(data) as Json)));
}

const sseChunks = (events: (Json | string)[]): Json[] => events.filter((e): e is Json => typeof e !== 'string');
const streamedContent = (chunks: Json[]): string => chunks.map((c) => at(c, 'choices', 0, 'delta', 'content') ?? '').join('');

describe('scripted model: Ollama /api/chat', () => {
  it('answers a non-streaming request with one JSON body, done and counts included', async () => {
    const runtime = await start([scripted.text('Hello there')]);
    const response = await post(runtime, OLLAMA, { model: 'qwen', messages: userMessage, stream: false });
    expect(response.status).toBe(200);
    const body = (await response.json()) as Json;
    expect(body).toMatchObject({ model: 'qwen', message: { role: 'assistant', content: 'Hello there' }, done: true, done_reason: 'stop' });
    expect(body.eval_count).toEqual(expect.any(Number));
    expect(body.prompt_eval_count).toEqual(expect.any(Number));
    expect(body.created_at).toEqual(expect.any(String));
  });

  it('streams NDJSON by default: one line per chunk, tool calls, then a done line', async () => {
    const runtime = await start([scripted.toolCallsAfterText('Looking.', { name: 'read_file', arguments: { file_path: '/a' } })]);
    const response = await post(runtime, OLLAMA, { model: 'qwen', messages: userMessage });
    expect(response.headers.get('content-type')).toBe('application/x-ndjson');
    const lines = await ollamaLines(response);
    expect(lines.map((l) => l.done)).toEqual([false, false, true]);
    expect(at(lines, 0, 'message', 'content')).toBe('Looking.');
    expect(at(lines, 1, 'message', 'tool_calls')).toEqual([{ id: 'call_0_0', function: { index: 0, name: 'read_file', arguments: { file_path: '/a' } } }]);
    expect(lines[2]).toMatchObject({ done_reason: 'stop', eval_count: expect.any(Number) });
    expect(runtime.requests[0]?.stream).toBe(true);
  });

  it('streams text in the scripted chunks', async () => {
    const runtime = await start([scripted.chunks('a', 'b', 'c')]);
    const lines = await ollamaLines(await post(runtime, OLLAMA, { messages: userMessage }));
    expect(lines.filter((l) => !l.done).map((l) => at(l, 'message', 'content'))).toEqual(['a', 'b', 'c']);
  });

  it('sends a call with malformed arguments as text, the way Ollama leaves a call it cannot parse', async () => {
    const runtime = await start([scripted.malformedArguments('read_file', '{"file_path": ')]);
    const body = (await (await post(runtime, OLLAMA, { messages: userMessage, stream: false })).json()) as Json;
    expect(at(body, 'message', 'tool_calls')).toBeUndefined();
    expect(at(body, 'message', 'content')).toBe('{"name": "read_file", "arguments": {"file_path": }');
  });

  it('reports an error inside the stream as an error line', async () => {
    const runtime = await start([scripted.streamError('model crashed', 'par', 'tial')]);
    const lines = await ollamaLines(await post(runtime, OLLAMA, { messages: userMessage }));
    expect(lines).toEqual([expect.objectContaining({ message: { role: 'assistant', content: 'par' } }), expect.objectContaining({ done: false }), { error: 'model crashed' }]);
  });
});

describe('scripted model: OpenAI /v1/chat/completions', () => {
  it('answers without streaming unless asked, with tool calls as JSON text', async () => {
    const runtime = await start([scripted.toolCalls({ name: 'glob_files', arguments: { pattern: '*.ts' }, id: 'abc' })]);
    const body = (await (await post(runtime, OPENAI, { model: 'm', messages: userMessage })).json()) as Json;
    expect(body.object).toBe('chat.completion');
    expect(at(body, 'choices', 0)).toEqual({
      index: 0,
      message: { role: 'assistant', content: null, tool_calls: [{ id: 'abc', type: 'function', function: { name: 'glob_files', arguments: '{"pattern":"*.ts"}' } }] },
      finish_reason: 'tool_calls',
    });
    const usage = body.usage as Record<string, number>;
    expect(usage.total_tokens).toBe((usage.prompt_tokens ?? 0) + (usage.completion_tokens ?? 0));
    expect(runtime.requests[0]?.stream).toBe(false);
  });

  it('streams SSE chunks ending in [DONE], with the finish reason on the last choice', async () => {
    const runtime = await start([scripted.chunks('Hel', 'lo')]);
    const response = await post(runtime, OPENAI, { messages: userMessage, stream: true });
    expect(response.headers.get('content-type')).toBe('text/event-stream');
    const events = await sseData(response);
    expect(events.at(-1)).toBe('[DONE]');
    const chunks = sseChunks(events);
    expect(at(chunks, 0, 'choices', 0, 'delta')).toEqual({ role: 'assistant', content: '' });
    expect(streamedContent(chunks)).toBe('Hello');
    expect(at(chunks.at(-1), 'choices', 0)).toMatchObject({ delta: {}, finish_reason: 'stop' });
    expect(chunks.every((c) => c.usage === undefined)).toBe(true);
  });

  it('streams a tool call as id and name first, then argument fragments, by index', async () => {
    const runtime = await start([scripted.toolCalls({ name: 'read_file', arguments: { file_path: '/w/long/path.ts' } }, { name: 'glob_files', arguments: { pattern: '**' } })]);
    const chunks = sseChunks(await sseData(await post(runtime, OPENAI, { messages: userMessage, stream: true })));
    const deltas = chunks.flatMap((c) => (at(c, 'choices', 0, 'delta', 'tool_calls') ?? []) as Json[]);
    expect(deltas[0]).toEqual({ index: 0, id: 'call_0_0', type: 'function', function: { name: 'read_file', arguments: '' } });
    const argumentsOf = (index: number): string =>
      deltas
        .filter((d) => d.index === index)
        .map((d) => at(d, 'function', 'arguments'))
        .join('');
    expect(deltas.filter((d) => d.index === 0).length).toBeGreaterThan(2);
    expect(JSON.parse(argumentsOf(0))).toEqual({ file_path: '/w/long/path.ts' });
    expect(JSON.parse(argumentsOf(1))).toEqual({ pattern: '**' });
    expect(at(chunks.at(-1), 'choices', 0, 'finish_reason')).toBe('tool_calls');
  });

  it('adds a usage chunk when stream_options.include_usage is set', async () => {
    const runtime = await start([scripted.text('counted')]);
    const chunks = sseChunks(await sseData(await post(runtime, OPENAI, { messages: userMessage, stream: true, stream_options: { include_usage: true } })));
    expect(chunks.at(-1)).toMatchObject({ choices: [], usage: { completion_tokens: expect.any(Number) } });
  });

  it('sends malformed arguments verbatim', async () => {
    const runtime = await start([scripted.malformedArguments('read_file', '{"file_path": "/a"')]);
    const body = (await (await post(runtime, OPENAI, { messages: userMessage })).json()) as Json;
    expect(at(body, 'choices', 0, 'message', 'tool_calls', 0, 'function', 'arguments')).toBe('{"file_path": "/a"');
  });

  it('reports an error inside the stream as an error event', async () => {
    const runtime = await start([scripted.streamError('out of memory', 'par')]);
    const events = await sseData(await post(runtime, OPENAI, { messages: userMessage, stream: true }));
    expect(events.at(-1)).toEqual({ error: { message: 'out of memory', type: 'server_error', code: 500 } });
  });
});

describe('scripted model: misbehaviour', () => {
  it.each([
    ['json', '{"name":"read_file","arguments":{"file_path":"/a"}}\n{"name":"glob_files","arguments":{"pattern":"*"}}'],
    ['fenced', '```json\n{\n  "name": "read_file",\n  "arguments": {\n    "file_path": "/a"\n  }\n}\n```\n\n```json\n{\n  "name": "glob_files",\n  "arguments": {\n    "pattern": "*"\n  }\n}\n```'],
    ['tagged', '<tool_call>\n{"name":"read_file","arguments":{"file_path":"/a"}}\n</tool_call>\n<tool_call>\n{"name":"glob_files","arguments":{"pattern":"*"}}\n</tool_call>'],
  ] as const)('writes tool calls as %s text, split across chunks when streamed', async (form, expected) => {
    const calls = [
      { name: 'read_file', arguments: { file_path: '/a' } },
      { name: 'glob_files', arguments: { pattern: '*' } },
    ];
    const runtime = await start([scripted.textToolCalls(form, calls, { before: 'Sure.' }), scripted.textToolCalls(form, calls)]);
    const whole = (await (await post(runtime, OPENAI, { messages: userMessage })).json()) as Json;
    expect(at(whole, 'choices', 0, 'message')).toEqual({ role: 'assistant', content: `Sure.\n\n${expected}` });
    const lines = await ollamaLines(await post(runtime, OLLAMA, { messages: userMessage }));
    const pieces = lines.filter((l) => !l.done).map((l) => at(l, 'message', 'content'));
    expect(pieces.length).toBeGreaterThan(1);
    expect(pieces.join('')).toBe(expected);
    expect(lines.some((l) => at(l, 'message', 'tool_calls') !== undefined)).toBe(false);
  });

  it('sends a call to a tool that was never offered as it is', async () => {
    const runtime = await start([scripted.toolCalls({ name: 'launch_missiles', arguments: {} })]);
    const body = (await (await post(runtime, OLLAMA, { messages: userMessage, tools: [], stream: false })).json()) as Json;
    expect(at(body, 'message', 'tool_calls', 0, 'function', 'name')).toBe('launch_missiles');
  });

  it.each([
    [OLLAMA, { error: 'GPU busy' }],
    [OPENAI, { error: { message: 'GPU busy', type: 'server_error', code: 503 } }],
  ])('answers an HTTP error in the protocol style of %s', async (path, expected) => {
    const runtime = await start([scripted.httpError(503, 'GPU busy')]);
    const response = await post(runtime, path, { messages: userMessage });
    expect(response.status).toBe(503);
    expect(await response.json()).toEqual(expected);
  });

  it('stalls until the client gives up', async () => {
    const runtime = await start([scripted.stall()]);
    const controller = new AbortController();
    const pending = post(runtime, OLLAMA, { messages: userMessage }, controller.signal);
    await expect.poll(() => runtime.requests.length).toBe(1);
    controller.abort();
    await expect(pending).rejects.toThrow();
    expect(await runtime.requests[0]?.outcome).toBe('client-closed');
  });

  it('answers after a delay', async () => {
    const runtime = await start([scripted.delayed(150, scripted.text('late'))]);
    const started = Date.now();
    const body = (await (await post(runtime, OLLAMA, { messages: userMessage, stream: false })).json()) as Json;
    expect(at(body, 'message', 'content')).toBe('late');
    expect(Date.now() - started).toBeGreaterThanOrEqual(140);
  });

  it('pauses between chunks', async () => {
    const runtime = await start([scripted.chunks('a', scripted.pause(120), 'b')]);
    const started = Date.now();
    await ollamaLines(await post(runtime, OLLAMA, { messages: userMessage }));
    expect(Date.now() - started).toBeGreaterThanOrEqual(110);
  });

  it('streams many pauses without piling listeners on the exchange (no MaxListeners warning)', async () => {
    const warnings: Error[] = [];
    const onWarning = (warning: Error): void => void warnings.push(warning);
    process.on('warning', onWarning);
    try {
      const chunks = Array.from({ length: 30 }, (_, i) => [`t${i} `, scripted.pause(1)]).flat();
      const runtime = await start([scripted.chunks(...chunks)]);
      const lines = await ollamaLines(await post(runtime, OLLAMA, { messages: userMessage }));
      expect(lines.map((line) => at(line, 'message', 'content')).join('')).toContain('t29 ');
      // Warnings are emitted on the next tick.
      await new Promise((resolve) => setImmediate(resolve));
    } finally {
      process.off('warning', onWarning);
    }
    expect(warnings.filter((warning) => warning.name === 'MaxListenersExceededWarning')).toEqual([]);
  });

  it('holds a stream until the test releases it', async () => {
    let release = (): void => undefined;
    const runtime = await start([scripted.chunks('first', scripted.until(new Promise<void>((resolve) => (release = resolve))), 'second')]);
    const response = await post(runtime, OLLAMA, { messages: userMessage });
    const reader = (response.body as ReadableStream<Uint8Array>).getReader();
    const firstRead = new TextDecoder().decode((await reader.read()).value);
    expect(firstRead).toContain('"content":"first"');
    expect(firstRead).not.toContain('second');
    release();
    let rest = '';
    for (let read = await reader.read(); !read.done; read = await reader.read()) rest += new TextDecoder().decode(read.value);
    expect(rest).toContain('"content":"second"');
    expect(await runtime.requests[0]?.outcome).toBe('answered');
  });

  it('drops the connection before answering', async () => {
    const runtime = await start([scripted.drop()]);
    await expect(post(runtime, OPENAI, { messages: userMessage })).rejects.toThrow('fetch failed');
    expect(await runtime.requests[0]?.outcome).toBe('dropped');
  });

  it('drops a stream after some chunks', async () => {
    const runtime = await start([scripted.drop('one ', 'two')]);
    const response = await post(runtime, OPENAI, { messages: userMessage, stream: true });
    expect(response.status).toBe(200);
    const reader = (response.body as ReadableStream<Uint8Array>).getReader();
    let received = '';
    const failure = await (async () => {
      for (;;) {
        const read = await reader.read();
        if (read.done) return undefined;
        received += new TextDecoder().decode(read.value);
      }
    })().catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(Error);
    expect(received).toContain('"content":"two"');
    expect(received).not.toContain('[DONE]');
  });

  it('drops a non-streaming answer halfway through its JSON', async () => {
    const runtime = await start([scripted.drop('some text')]);
    const response = await post(runtime, OLLAMA, { messages: userMessage, stream: false });
    await expect(response.text()).rejects.toThrow();
  });
});

describe('scripted model: script', () => {
  it('records what each request sent, the same shape for both protocols', async () => {
    const runtime = await start([scripted.text('a'), scripted.text('b')]);
    const tools = [{ type: 'function', function: { name: 'read_file', description: 'Read', parameters: { type: 'object' } } }];
    const history = (args: unknown) => [
      { role: 'system', content: 'sys' },
      { role: 'user', content: 'u' },
      { role: 'assistant', content: '', tool_calls: [{ id: 'c1', type: 'function', function: { name: 'read_file', arguments: args } }] },
      { role: 'tool', tool_call_id: 'c1', content: 'file text' },
    ];
    await post(runtime, OLLAMA, { model: 'q', messages: history({ file_path: '/a' }), tools, temperature: 0.9, options: { temperature: 0.3, num_ctx: 4096 }, stream: false });
    await post(runtime, OPENAI, { model: 'q', messages: history('{"file_path":"/a"}'), tools, temperature: 0.3 });
    const [ollama, openai] = runtime.requests;
    for (const request of [ollama, openai]) {
      expect(request?.messages).toEqual([
        { role: 'system', content: 'sys' },
        { role: 'user', content: 'u' },
        { role: 'assistant', content: '', toolCalls: [{ id: 'c1', name: 'read_file', arguments: { file_path: '/a' } }] },
        { role: 'tool', content: 'file text', toolCallId: 'c1' },
      ]);
      expect(request?.tools).toEqual([{ name: 'read_file', description: 'Read', parameters: { type: 'object' } }]);
      expect(request?.temperature).toBe(0.3);
      expect(request?.model).toBe('q');
    }
    expect(ollama).toMatchObject({ protocol: 'ollama', path: OLLAMA, numCtx: 4096, stream: false });
    expect(openai).toMatchObject({ protocol: 'openai', path: OPENAI, numCtx: undefined });
    expect(ollama?.headers['content-type']).toBe('application/json');
  });

  it('lets a step choose its turn from the request', async () => {
    const runtime = await start([async (request) => scripted.text(`you sent ${request.messages.length} messages`)]);
    const body = (await (await post(runtime, OLLAMA, { messages: [...userMessage, ...userMessage], stream: false })).json()) as Json;
    expect(at(body, 'message', 'content')).toBe('you sent 2 messages');
  });

  it('answers a clear 500 when the script runs out, and takes more turns pushed later', async () => {
    const runtime = await start([scripted.text('one')]);
    await post(runtime, OPENAI, { messages: userMessage });
    const exhausted = await post(runtime, OPENAI, { messages: userMessage });
    expect(exhausted.status).toBe(500);
    expect(at(await exhausted.json(), 'error', 'message')).toBe(
      'scripted model: script exhausted: request #2 (POST /v1/chat/completions) has no turn left; 1 turn(s) were scripted',
    );
    runtime.push(scripted.text('two'));
    expect(runtime.remaining).toBe(1);
    const body = (await (await post(runtime, OPENAI, { messages: userMessage })).json()) as Json;
    expect(at(body, 'choices', 0, 'message', 'content')).toBe('two');
    expect(runtime.remaining).toBe(0);
  });

  it('refuses a body that is not JSON without using a turn', async () => {
    const runtime = await start([scripted.text('kept')]);
    const response = await fetch(`${runtime.url}${OLLAMA}`, { method: 'POST', body: 'not json' });
    expect(response.status).toBe(400);
    expect(runtime.remaining).toBe(1);
  });

  it('lists its models, and answers 404 in each protocol for another model', async () => {
    const runtime = await start([scripted.text('unused')], { models: ['llama3.1:8b'] });
    expect(await (await fetch(`${runtime.url}/api/tags`)).json()).toMatchObject({ models: [{ name: 'llama3.1:8b' }] });
    expect(await (await fetch(`${runtime.openaiUrl}/models`)).json()).toMatchObject({ object: 'list', data: [{ id: 'llama3.1:8b' }] });
    const ollama = await post(runtime, OLLAMA, { model: 'qwen', messages: userMessage });
    expect(ollama.status).toBe(404);
    expect(await ollama.json()).toEqual({ error: 'model "qwen" not found, try pulling it first' });
    const openai = await post(runtime, OPENAI, { model: 'qwen', messages: userMessage });
    expect(at(await openai.json(), 'error', 'message')).toBe('The model `qwen` does not exist.');
    expect(runtime.remaining).toBe(1);
  });

  it('in zero-latency mode streams the same answer', async () => {
    const runtime = await start([scripted.text('fast answer here'), scripted.toolCalls({ name: 'read_file', arguments: { file_path: '/a' } })], { zeroLatency: true });
    const chunks = sseChunks(await sseData(await post(runtime, OPENAI, { messages: userMessage, stream: true })));
    expect(streamedContent(chunks)).toBe('fast answer here');
    const lines = await ollamaLines(await post(runtime, OLLAMA, { messages: userMessage }));
    expect(at(lines.at(-2), 'message', 'tool_calls', 0, 'function', 'name')).toBe('read_file');
  });

  it('closes with a request still stalled', async () => {
    const runtime = await start([scripted.stall()]);
    const pending = post(runtime, OLLAMA, { messages: userMessage }).catch((error: unknown) => error);
    await expect.poll(() => runtime.requests.length).toBe(1);
    await runtime.close();
    model = undefined;
    expect(await pending).toBeInstanceOf(Error);
    expect(await runtime.requests[0]?.outcome).toBe('server-closed');
  });
});
