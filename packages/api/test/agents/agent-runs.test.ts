import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { scripted, startScriptedModel, type ScriptedModel } from '@mada/testkit';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../support/app.js';
import { parseFrames } from '../support/sse.js';

describe.each(['ollama', 'openai'] as const)('agent runs over the %s protocol', (protocol) => {
  let model: ScriptedModel;
  let t: TestApp;

  beforeEach(async () => {
    model = await startScriptedModel();
    t = await createTestApp({ model: { url: model.url, protocol } });
    mkdirSync(join(t.workdir, 'src'));
    writeFileSync(join(t.workdir, 'src', 'app.ts'), 'export const answer = 42;\n');
  });
  afterEach(async () => {
    await t.close();
    await model.close();
  });

  const run = (body: object) => t.app.inject({ method: 'POST', url: '/agents/run', payload: body });
  const stream = async (body: object) => parseFrames((await t.app.inject({ method: 'POST', url: '/agents/stream', payload: body })).body);

  it('runs explore: tool call, result back to the model, final answer', async () => {
    model.push(scripted.toolCalls({ name: 'read_file', arguments: { file_path: join(t.workdir, 'src/app.ts') } }), scripted.text('answer is 42'));
    const response = await run({ agent_type: 'explore', prompt: 'What is the answer?' });
    expect(response.json()).toEqual({ response: 'answer is 42', agent_type: 'explore', mode: 'default', success: true });
    const [first, second] = model.requests;
    expect(first?.stream).toBe(false);
    expect(first?.temperature).toBe(0.3);
    expect(first?.messages[0]?.role).toBe('system');
    expect(first?.messages[0]?.content).toContain(`Working directory: ${t.workdir}`);
    expect(first?.messages[0]?.content).toContain('Call a tool before you answer');
    expect(first?.messages[1]).toMatchObject({ role: 'user', content: 'What is the answer?' });
    expect(second?.messages.at(-1)).toMatchObject({ role: 'tool', content: '     1\texport const answer = 42;' });
    if (protocol === 'ollama') expect(first?.numCtx).toBe(32768);
  });

  it('streams explore as tool events, chunk frames and done with the mode', async () => {
    model.push(scripted.toolCalls({ name: 'glob_files', arguments: { pattern: '**/*.ts' } }), scripted.chunks('The ', 'file is src/app.ts'));
    const frames = await stream({ agent_type: 'explore', prompt: 'Find TypeScript files', mode: 'plan' });
    expect(frames).toEqual([
      { event: 'tool_start', tool: 'glob_files', args: { pattern: '**/*.ts' } },
      { event: 'tool_done', tool: 'glob_files', result_summary: join(t.workdir, 'src/app.ts'), outcome: 'ok' },
      { event: 'chunk', data: 'The ' },
      { event: 'chunk', data: 'file is src/app.ts' },
      { event: 'done', mode: 'plan' },
    ]);
    expect(model.requests.every((r) => r.stream)).toBe(true);
  });

  it('streams task answers as response events and ends with done', async () => {
    model.push(scripted.toolCalls({ name: 'grep_content', arguments: { pattern: 'answer' } }), scripted.chunks('Found ', 'it.'));
    const frames = await stream({ agent_type: 'task', prompt: 'Where is answer defined?', mode: 'auto_accept' });
    expect(frames).toEqual([
      { event: 'tool_start', tool: 'grep_content', args: { pattern: 'answer' } },
      { event: 'tool_done', tool: 'grep_content', result_summary: `${join(t.workdir, 'src/app.ts')}:1: export const answer = 42;`, outcome: 'ok' },
      { event: 'response', text: 'Found ' },
      { event: 'response', text: 'it.' },
      { event: 'done', mode: 'auto_accept' },
    ]);
  });

  it('sends tool_start with the documented args for each of the nine tools', async () => {
    const file = join(t.workdir, 'src/app.ts');
    model.push(
      scripted.toolCalls(
        { name: 'read_file', arguments: { file_path: file, offset: 0, limit: 5 } },
        { name: 'glob_files', arguments: { pattern: '*.ts', path: t.workdir } },
        { name: 'grep_content', arguments: { pattern: 'answer', path: t.workdir, file_glob: '*.ts' } },
        { name: 'bash_readonly', arguments: { command: 'ls src' } },
        { name: 'edit_file', arguments: { file_path: file, old_string: '42', new_string: '43' } },
        { name: 'write_file', arguments: { file_path: join(t.workdir, 'notes.md'), content: 'hi' } },
        { name: 'bash', arguments: { command: 'ls', cwd: t.workdir } },
        { name: 'web_search', arguments: { query: 'fastify sse', num_results: 3 } },
        { name: 'spawn_agent', arguments: { agent_type: 'explore', prompt: 'short' } },
      ),
      scripted.text('sub-agent answer'),
      scripted.text('all done'),
    );
    const frames = await stream({ agent_type: 'task', prompt: 'use everything', mode: 'auto_accept' });
    expect(frames.filter((f) => f.event === 'tool_start').map((f) => [f.tool, f.args])).toEqual([
      ['read_file', { file_path: file, offset: 0, limit: 5 }],
      ['glob_files', { pattern: '*.ts', path: t.workdir }],
      ['grep_content', { pattern: 'answer', path: t.workdir, file_glob: '*.ts' }],
      ['bash_readonly', { command: 'ls src' }],
      ['edit_file', { file_path: file, replace_all: false }],
      ['write_file', { file_path: join(t.workdir, 'notes.md') }],
      ['bash', { command: 'ls', cwd: t.workdir }],
      ['web_search', { query: 'fastify sse', num_results: 3 }],
      ['spawn_agent', { agent_type: 'explore', prompt: 'short' }],
    ]);
    expect(frames.filter((f) => f.event === 'tool_done')).toHaveLength(9);
  });

  it('re-prompts task twice when it answers without tools, and not a third time', async () => {
    model.push(scripted.text('I think it is fine.'), scripted.text('Still fine.'), scripted.text('Trust me.'));
    const frames = await stream({ agent_type: 'task', prompt: 'Is the code fine?' });
    expect(model.requests).toHaveLength(3);
    const lastUser = (i: number) => model.requests[i]?.messages.filter((m) => m.role === 'user').at(-1)?.content;
    expect(lastUser(1)).toBe('You answered without calling any tool. You must use your tools to inspect the working directory before you answer: call a tool now.');
    expect(lastUser(2)).toMatch(/^You still have not called a tool\./);
    expect(frames.filter((f) => f.event === 'response').map((f) => f.text).join('')).toBe('Trust me.');
    expect(frames.at(-1)).toEqual({ event: 'done', mode: 'default' });
  });

  it('does not re-prompt explore or plan', async () => {
    model.push(scripted.text('No tools needed.'));
    expect((await run({ agent_type: 'plan', prompt: 'hi' })).json().response).toBe('No tools needed.');
    expect(model.requests).toHaveLength(1);
  });

  it.each([
    ['explore', 'default', ['bash_readonly', 'glob_files', 'grep_content', 'read_file']],
    ['plan', 'auto_accept', ['bash_readonly', 'glob_files', 'grep_content', 'read_file']],
    ['task', 'plan', ['bash_readonly', 'glob_files', 'grep_content', 'read_file', 'spawn_agent']],
    ['task', 'default', ['bash', 'bash_readonly', 'edit_file', 'glob_files', 'grep_content', 'read_file', 'spawn_agent', 'web_search', 'write_file']],
  ])('offers %s in mode %s exactly its tools', async (agent, mode, expected) => {
    model.push(scripted.toolCalls({ name: 'glob_files', arguments: { pattern: '*' } }), scripted.text('done'));
    await run({ agent_type: agent, prompt: 'look', mode });
    expect(model.requests[0]?.tools.map((tool) => tool.name).sort()).toEqual(expected);
  });

  it.each(['json', 'fenced', 'tagged'] as const)('executes tool calls the model wrote as %s text', async (form) => {
    model.push(scripted.textToolCalls(form, [{ name: 'read_file', arguments: { file_path: join(t.workdir, 'src/app.ts') } }]), scripted.text('42'));
    const response = await run({ agent_type: 'explore', prompt: 'read it' });
    expect(response.json().response).toBe('42');
    expect(model.requests[1]?.messages.at(-1)).toMatchObject({ role: 'tool', content: '     1\texport const answer = 42;' });
  });

  it('sends unknown tools and invalid arguments back to the model as errors', async () => {
    model.push(
      scripted.toolCalls({ name: 'delete_everything', arguments: {} }),
      scripted.toolCalls({ name: 'read_file', arguments: { offset: 'x' } }),
      scripted.text('ok'),
    );
    expect((await run({ agent_type: 'explore', prompt: 'go' })).json()).toMatchObject({ success: true, response: 'ok' });
    expect(model.requests[1]?.messages.at(-1)?.content).toBe(
      "Error: Unknown tool 'delete_everything'. Available tools: read_file, glob_files, grep_content, bash_readonly",
    );
    expect(model.requests[2]?.messages.at(-1)?.content).toMatch(/^Error: Invalid arguments for read_file: /);
  });

  it('answers 400 for an unknown agent and 422 for a missing prompt, before running anything', async () => {
    const unknown = await run({ agent_type: 'wizard', prompt: 'x' });
    expect([unknown.statusCode, unknown.json()]).toEqual([400, { detail: 'Unknown agent type: wizard' }]);
    const streamed = await t.app.inject({ method: 'POST', url: '/agents/stream', payload: { agent_type: 'wizard', prompt: 'x' } });
    expect([streamed.statusCode, streamed.json()]).toEqual([400, { detail: 'Unknown agent type: wizard' }]);
    const missing = await run({ agent_type: 'explore' });
    expect([missing.statusCode, missing.json()]).toEqual([422, { detail: [{ loc: ['body', 'prompt'], msg: 'Field required', type: 'missing' }] }]);
    expect(model.requests).toHaveLength(0);
  });

  it('refuses a working directory outside the allowed paths', async () => {
    const response = await run({ agent_type: 'explore', prompt: 'x', working_dir: '/etc' });
    expect([response.statusCode, response.json()]).toEqual([400, { detail: 'Working directory not allowed: /etc' }]);
  });

  it('reports a failing run as success false on /agents/run and as an error frame on the stream', async () => {
    model.push(scripted.httpError(400, 'model exploded'), scripted.httpError(400, 'model exploded'));
    const response = await run({ agent_type: 'explore', prompt: 'x' });
    expect(response.statusCode).toBe(200);
    expect(response.json()).toMatchObject({ response: '', success: false, error: expect.stringContaining('model exploded') });
    const frames = await stream({ agent_type: 'explore', prompt: 'x' });
    expect(frames).toEqual([{ event: 'error', error_message: expect.stringContaining('model exploded') }]);
  });

  it('stops at AGENT_MAX_STEPS with a clear message', async () => {
    await t.close();
    t = await createTestApp({ model: { url: model.url, protocol }, env: { AGENT_MAX_STEPS: '2' } });
    model.push(scripted.toolCalls({ name: 'glob_files', arguments: { pattern: '*' } }), scripted.toolCalls({ name: 'glob_files', arguments: { pattern: '*' } }));
    expect((await run({ agent_type: 'explore', prompt: 'loop' })).json()).toMatchObject({
      success: false,
      error: 'Stopped after 2 model calls without a final answer (AGENT_MAX_STEPS=2)',
    });
  });
});
