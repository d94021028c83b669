import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { scripted, startScriptedModel, type ScriptedModel } from '@mada/testkit';
import { afterEach, describe, expect, it } from 'vitest';
import { call, type Json } from '../support/api-call.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { DIALECTS } from '../support/databases.js';
import { receivedTokens } from '../support/request-tokens.js';
import { until } from '../support/until.js';

/*
 * One runtime serving two models (TEAMS.md section 13): `large`, with a 32,768-token window and
 * native tool calls, the default; `small`, with a 4,096-token window and no tool support, whose
 * calls are written in its text. Every run is sent the model it asked for, within that model's
 * window, in that model's tool-call mode.
 */

const LARGE = 'large-coder:32b';
const SMALL = 'small-coder:1b';

let model: ScriptedModel | undefined;
let t: TestApp | undefined;

afterEach(async () => {
  await t?.close();
  await model?.close();
  t = undefined;
  model = undefined;
});

async function start(dialect: (typeof DIALECTS)[number]): Promise<{ model: ScriptedModel; t: TestApp; address: string }> {
  model = await startScriptedModel({
    models: [LARGE, SMALL],
    runtimes: {
      [LARGE]: { contextLength: 32_768, capabilities: ['completion', 'tools'] },
      [SMALL]: { contextLength: 4096, capabilities: ['completion'] },
    },
  });
  t = await createTestApp({ dialect, model: { url: model.url }, env: { LLM_MODEL: LARGE, LLM_MODELS: `${SMALL},${LARGE}` } });
  const address = await t.app.listen({ port: 0, host: '127.0.0.1' });
  return { model, t, address };
}

const ended = (address: string, id: string): Promise<Json> =>
  until(
    async () => (await call(address, undefined, 'GET', `/runs/${String(id)}`)).body,
    (run) => !['queued', 'running', 'waiting_approval'].includes(String(run.status)),
    `run ${id} to end`,
  );

/** A file whose reading takes a good part of the small window: four of them cannot all stay. */
function bigFile(dir: string): string {
  const path = join(dir, 'big.txt');
  writeFileSync(path, Array.from({ length: 70 }, (_, i) => `line ${i}: some words that make this file long enough to matter`).join('\n'));
  return path;
}

describe.each(DIALECTS)('models chosen per run on %s', (dialect) => {
  it('lists each model with its own window and tool-call mode', async () => {
    const { address } = await start(dialect);
    const listed = await call(address, undefined, 'GET', '/models');
    expect(listed).toEqual({
      status: 200,
      body: {
        models: [
          { name: LARGE, context_window: 32_768, tool_calls: 'native', default: true, available: true },
          { name: SMALL, context_window: 4096, tool_calls: 'text', default: false, available: true },
        ],
      },
    });
  });

  it("sends each run to its model, within that model's window and in its tool-call mode", async () => {
    const { model, t, address } = await start(dialect);
    const big = bigFile(t.workdir);
    const read = { name: 'read_file', arguments: { file_path: big } };
    // The small model's run: four reads written as text, then its answer.
    model.push(...Array.from({ length: 4 }, () => scripted.textToolCalls('tagged', [read])), scripted.text('small done'));
    const small = await call(address, undefined, 'POST', '/runs', { agent_type: 'explore', prompt: 'read it four times', model: SMALL });
    expect(small.status).toBe(202);
    expect(small.body.model).toBe(SMALL);
    expect(await ended(address, String(small.body.id))).toMatchObject({ status: 'succeeded', response: 'small done', model: SMALL });
    const smallRequests = model.requests.slice();
    expect(smallRequests).toHaveLength(5);
    for (const request of smallRequests) {
      expect(request.model).toBe(SMALL);
      expect(request.numCtx).toBe(4096);
      // A quarter of the window is kept for the answer.
      expect(receivedTokens(request)).toBeLessThanOrEqual(4096 - 1024);
      // Text mode: no `tools` field, the tools described in the system prompt.
      expect(request.body.tools).toBeUndefined();
      expect(request.messages[0]?.content).toContain('<tool_call>');
    }
    // The older results were masked to fit the small window; the newest is whole.
    const results = smallRequests.at(-1)!.messages.filter((m) => m.role !== 'system' && (m.content.includes('line 69') || m.content.includes('[Output of read_file removed')));
    expect(results).toHaveLength(4);
    expect(results[0]?.content).toContain('[Output of read_file removed');
    expect(results.at(-1)?.content).toContain('line 69');

    // The default model's run (no `model`): native tools, its large window, nothing masked.
    model.push(scripted.toolCalls(read), scripted.toolCalls(read), scripted.toolCalls(read), scripted.toolCalls(read), scripted.text('large done'));
    const large = await call(address, undefined, 'POST', '/runs', { agent_type: 'explore', prompt: 'read it four times' });
    expect(large.body.model).toBe(LARGE);
    expect(await ended(address, String(large.body.id))).toMatchObject({ status: 'succeeded', response: 'large done', model: LARGE });
    const largeRequests = model.requests.slice(5);
    expect(largeRequests).toHaveLength(5);
    for (const request of largeRequests) {
      expect(request.model).toBe(LARGE);
      expect(request.numCtx).toBe(32_768);
      expect(request.tools.map((tool) => tool.name)).toContain('read_file');
    }
    expect(largeRequests.at(-1)!.messages.filter((m) => m.role === 'tool').every((m) => m.content.includes('line 69'))).toBe(true);

    // Usage per model in the metrics, under the configured names.
    const metrics = (await t.app.inject({ method: 'GET', url: '/metrics' })).body;
    expect(metrics).toMatch(new RegExp(`mada_model_calls_total\\{model="${SMALL}",kind="stream",outcome="ok"\\} 5`));
    expect(metrics).toMatch(new RegExp(`mada_model_calls_total\\{model="${LARGE}",kind="stream",outcome="ok"\\} 5`));
  });

  it("gives a sub-agent its parent run's model", async () => {
    const { model, t, address } = await start(dialect);
    writeFileSync(join(t.workdir, 'a.ts'), 'export const a = 1;\n');
    model.push(
      scripted.textToolCalls('tagged', [{ name: 'spawn_agent', arguments: { agent_type: 'explore', prompt: 'what is a?' } }]),
      scripted.text('a is 1'),
      scripted.text('the sub-agent says a is 1'),
    );
    const run = await call(address, undefined, 'POST', '/runs', { agent_type: 'task', mode: 'plan', prompt: 'ask a sub-agent', model: SMALL });
    expect(await ended(address, String(run.body.id))).toMatchObject({ status: 'succeeded', model: SMALL });
    expect(model.requests.map((request) => request.model)).toEqual([SMALL, SMALL, SMALL]);
  });

  it("keeps a conversation's model for its turns, and a turn may name another", async () => {
    const { model, address } = await start(dialect);
    const created = await call(address, undefined, 'POST', '/conversations/', { agent_type: 'explore', model: SMALL });
    expect(created).toMatchObject({ status: 201, body: { model: SMALL } });
    const id = String(created.body.id);
    model.push(scripted.text('first'), scripted.text('second'));
    const first = await call(address, undefined, 'POST', `/conversations/${id}/messages`, { content: 'hello' });
    expect(first.status).toBe(200);
    const second = await call(address, undefined, 'POST', `/conversations/${id}/runs`, { content: 'again', model: LARGE });
    expect(second.body.model).toBe(LARGE);
    await ended(address, String(second.body.id));
    expect(model.requests.map((request) => request.model)).toEqual([SMALL, LARGE]);
    expect((await call(address, undefined, 'GET', `/conversations/${id}`)).body.model).toBe(SMALL);
  });

  it('refuses an unknown model on every route that starts a run, and on conversation creation', async () => {
    const { model, address } = await start(dialect);
    const unknown = { status: 400, body: { detail: 'Unknown model: gpt-9' } };
    expect(await call(address, undefined, 'POST', '/runs', { agent_type: 'explore', prompt: 'hi', model: 'gpt-9' })).toEqual(unknown);
    expect(await call(address, undefined, 'POST', '/agents/run', { agent_type: 'explore', prompt: 'hi', model: 'gpt-9' })).toEqual(unknown);
    expect(await call(address, undefined, 'POST', '/agents/stream', { agent_type: 'explore', prompt: 'hi', model: 'gpt-9' })).toEqual(unknown);
    expect(await call(address, undefined, 'POST', '/conversations/', { model: 'gpt-9' })).toEqual(unknown);
    const id = String((await call(address, undefined, 'POST', '/conversations/', {})).body.id);
    expect(await call(address, undefined, 'POST', `/conversations/${id}/runs`, { content: 'hi', model: 'gpt-9' })).toEqual(unknown);
    expect(await call(address, undefined, 'POST', `/conversations/${id}/messages`, { content: 'hi', model: 'gpt-9' })).toEqual(unknown);
    expect(await call(address, undefined, 'POST', `/conversations/${id}/stream`, { content: 'hi', model: 'gpt-9' })).toEqual(unknown);
    expect((await call(address, undefined, 'GET', '/runs')).body.total).toBe(0);
    expect(model.requests).toHaveLength(0);
  });

  it('fails a run on a model the runtime no longer has with its reason, and /health names the model', async () => {
    const { model, address } = await start(dialect);
    model.serveModels([LARGE]);
    const run = await call(address, undefined, 'POST', '/runs', { agent_type: 'explore', prompt: 'hi', model: SMALL });
    const failed = await ended(address, String(run.body.id));
    expect(failed).toMatchObject({ status: 'failed', model: SMALL });
    expect(String(failed.error)).toContain(`model "${SMALL}" not found`);
    const health = await until(
      async () => (await call(address, undefined, 'GET', '/health')).body,
      (body) => Array.isArray(body.missing_models),
      '/health to name the missing model',
    );
    expect(health).toMatchObject({ status: 'degraded', model: { name: LARGE }, missing_models: [{ name: SMALL, reason: `model '${SMALL}' not found` }] });
    expect((await call(address, undefined, 'GET', '/models')).body.models).toContainEqual(expect.objectContaining({ name: SMALL, available: false }));
  });
});
