import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { scripted, startScriptedModel, type ScriptedModel } from '@mada/testkit';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ServiceMetrics } from '../../src/metrics/service-metrics.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { sample, scrape } from '../support/metrics.js';
import { parseFrames } from '../support/sse.js';

describe('run, tool and model metrics', () => {
  let model: ScriptedModel;
  let t: TestApp;

  beforeEach(async () => {
    model = await startScriptedModel();
    t = await createTestApp({ model: { url: model.url } });
    writeFileSync(join(t.workdir, 'notes.txt'), 'the answer is 42\n');
  });
  afterEach(async () => {
    await t.close();
    await model.close();
  });

  it('counts a streamed run while it is active and after it succeeded, with its tool and model calls', async () => {
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    model.push(scripted.toolCalls({ name: 'read_file', arguments: { file_path: join(t.workdir, 'notes.txt') } }), scripted.chunks('It is ', scripted.until(held), '42.'));
    const running = t.app.inject({ method: 'POST', url: '/agents/stream', payload: { agent_type: 'explore', prompt: 'What is the answer?' } });
    await expect.poll(() => model.requests.length).toBe(2);

    const during = await scrape(t.app);
    expect(sample(during, 'mada_agent_runs_active', { agent: 'explore' })).toBe(1);
    expect(sample(during, 'mada_sse_streams_open')).toBe(1);
    release();
    expect(parseFrames((await running).body).at(-1)).toEqual({ event: 'done', mode: 'default' });

    const after = await scrape(t.app);
    expect(sample(after, 'mada_agent_runs_active', { agent: 'explore' })).toBe(0);
    expect(sample(after, 'mada_sse_streams_open')).toBe(0);
    expect(sample(after, 'mada_agent_runs_total', { agent: 'explore', status: 'succeeded' })).toBe(1);
    expect(sample(after, 'mada_agent_run_duration_seconds_count', { agent: 'explore', status: 'succeeded' })).toBe(1);
    expect(sample(after, 'mada_tool_calls_total', { tool: 'read_file', outcome: 'ok' })).toBe(1);
    expect(sample(after, 'mada_tool_call_duration_seconds_count', { tool: 'read_file', outcome: 'ok' })).toBe(1);
    expect(sample(after, 'mada_model_calls_total', { kind: 'stream', outcome: 'ok' })).toBe(2);
    expect(sample(after, 'mada_model_first_token_seconds_count')).toBe(2);
    const tokens = (name: string) => (sample(after, name, { source: 'reported' }) ?? 0) + (sample(after, name, { source: 'counted' }) ?? 0);
    expect(tokens('mada_model_input_tokens_total')).toBeGreaterThan(0);
    expect(tokens('mada_model_output_tokens_total')).toBeGreaterThan(0);
    expect(sample(after, 'mada_http_requests_total', { method: 'POST', route: '/agents/stream', status: '200' })).toBe(1);
  });

  it('counts a run whose client went away as cancelled, and its stream as closed', async () => {
    model.push(scripted.chunks('Looking ', scripted.until(new Promise(() => undefined))));
    const base = await t.app.listen({ host: '127.0.0.1', port: 0 });
    const client = new AbortController();
    const response = await fetch(`${base}/agents/stream`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ agent_type: 'explore', prompt: 'Look' }),
      signal: client.signal,
    });
    const reader = response.body!.getReader();
    await reader.read();
    expect(sample(await scrape(t.app), 'mada_sse_streams_open')).toBe(1);
    client.abort();

    await expect.poll(async () => sample(await scrape(t.app), 'mada_agent_runs_total', { agent: 'explore', status: 'cancelled' })).toBe(1);
    const text = await scrape(t.app);
    expect(sample(text, 'mada_agent_runs_active', { agent: 'explore' })).toBe(0);
    expect(sample(text, 'mada_sse_streams_open')).toBe(0);
    expect(sample(text, 'mada_model_calls_total', { kind: 'stream', outcome: 'cancelled' })).toBe(1);
  });

  it('shows runs waiting for a place as queued, and a run stopped by shutdown as interrupted', async () => {
    const one = await createTestApp({ model: { url: model.url }, env: { MAX_CONCURRENT_RUNS: '1' } });
    try {
      model.push(scripted.chunks('Thinking ', scripted.until(new Promise(() => undefined))));
      for (const prompt of ['first', 'second', 'third']) {
        const started = await one.app.inject({ method: 'POST', url: '/runs', payload: { agent_type: 'plan', prompt } });
        expect(started.statusCode).toBe(202);
      }
      await expect.poll(() => model.requests.length).toBe(1);
      const waiting = await scrape(one.app);
      expect(sample(waiting, 'mada_agent_runs_queued')).toBe(2);
      expect(sample(waiting, 'mada_agent_runs_active', { agent: 'plan' })).toBe(1);

      await one.runs.close();
      const after = await scrape(one.app);
      expect(sample(after, 'mada_agent_runs_queued')).toBe(0);
      expect(sample(after, 'mada_agent_runs_active', { agent: 'plan' })).toBe(0);
      // The running one and the two that never started: every run ends with a status.
      expect(sample(after, 'mada_agent_runs_total', { agent: 'plan', status: 'interrupted' })).toBe(3);
      expect(sample(after, 'mada_agent_runs_total', { agent: 'plan', status: 'cancelled' })).toBeUndefined();
    } finally {
      await one.close();
    }
  });

  it('counts a run cancelled while it waited in the queue, with its wait as its duration', async () => {
    const one = await createTestApp({ model: { url: model.url }, env: { MAX_CONCURRENT_RUNS: '1' } });
    try {
      model.push(scripted.chunks('Thinking ', scripted.until(new Promise(() => undefined))));
      const ids: string[] = [];
      for (const prompt of ['first', 'second']) ids.push((await one.app.inject({ method: 'POST', url: '/runs', payload: { agent_type: 'plan', prompt } })).json<{ id: string }>().id);
      await expect.poll(() => model.requests.length).toBe(1);
      expect((await one.app.inject({ method: 'POST', url: `/runs/${ids[1]}/cancel` })).statusCode).toBe(202);
      await expect.poll(async () => sample(await scrape(one.app), 'mada_agent_runs_total', { agent: 'plan', status: 'cancelled' })).toBe(1);
      const text = await scrape(one.app);
      expect(sample(text, 'mada_agent_run_duration_seconds_count', { agent: 'plan', status: 'cancelled' })).toBe(1);
      expect(sample(text, 'mada_agent_runs_queued')).toBe(0);
      expect(sample(text, 'mada_agent_runs_active', { agent: 'plan' })).toBe(1);
    } finally {
      await one.close();
    }
  });

  it('reports pending approvals from whatever source is registered, 0 without one', async () => {
    const metrics = new ServiceMetrics();
    expect(sample(await metrics.render(), 'mada_approvals_pending')).toBe(0);
    const remove = metrics.countPendingApprovals(() => 3);
    expect(sample(await metrics.render(), 'mada_approvals_pending')).toBe(3);
    remove();
    expect(sample(await metrics.render(), 'mada_approvals_pending')).toBe(0);
  });

  it('counts a failed run and its failed model call; refusals before a run are not runs', async () => {
    model.push(scripted.httpError(400, 'model is broken'));
    const failed = await t.app.inject({ method: 'POST', url: '/agents/run', payload: { agent_type: 'plan', prompt: 'Plan it' } });
    expect(failed.json()).toMatchObject({ success: false });
    const refused = await t.app.inject({ method: 'POST', url: '/agents/run', payload: { agent_type: 'no-such-agent', prompt: 'x' } });
    expect(refused.statusCode).toBe(400);

    const text = await scrape(t.app);
    expect(sample(text, 'mada_agent_runs_total', { agent: 'plan', status: 'failed' })).toBe(1);
    expect(sample(text, 'mada_model_calls_total', { kind: 'complete', outcome: 'error' })).toBe(1);
    expect(text).not.toContain('no-such-agent');
  });

  it('counts a sub-agent as part of its run, tool errors as errors, and never labels a tool name the model made up', async () => {
    model.push(
      scripted.toolCalls(
        { name: 'read_file', arguments: { file_path: join(t.workdir, 'missing.txt') } },
        { name: 'invented_tool_xyz', arguments: {} },
        { name: 'spawn_agent', arguments: { agent_type: 'explore', prompt: 'Look around' } },
      ),
      scripted.text('sub-agent answer'),
      scripted.text('Done.'),
    );
    const response = await t.app.inject({ method: 'POST', url: '/agents/run', payload: { agent_type: 'task', prompt: 'Do it', mode: 'auto_accept' } });
    expect(response.json()).toMatchObject({ response: 'Done.', success: true });

    const text = await scrape(t.app);
    expect(sample(text, 'mada_agent_runs_total', { agent: 'task', status: 'succeeded' })).toBe(1);
    expect(sample(text, 'mada_agent_runs_total', { agent: 'explore', status: 'succeeded' })).toBeUndefined();
    expect(sample(text, 'mada_tool_calls_total', { tool: 'read_file', outcome: 'error' })).toBe(1);
    expect(sample(text, 'mada_tool_calls_total', { tool: 'spawn_agent', outcome: 'ok' })).toBe(1);
    expect(sample(text, 'mada_model_calls_total', { kind: 'complete', outcome: 'ok' })).toBe(3);
    expect(text).not.toContain('invented_tool_xyz');
  });

  it('counts a tool stopped by TOOL_TIMEOUT_SECONDS as a timeout', async () => {
    const slow = await createTestApp({ model: { url: model.url }, env: { TOOL_TIMEOUT_SECONDS: '0.5' } });
    try {
      model.push(scripted.toolCalls({ name: 'bash', arguments: { command: 'node -e "setTimeout(() => {}, 5000)"' } }), scripted.text('It took too long.'));
      const response = await slow.app.inject({ method: 'POST', url: '/agents/run', payload: { agent_type: 'task', prompt: 'Wait', mode: 'auto_accept' } });
      expect(response.json()).toMatchObject({ success: true });
      expect(sample(await scrape(slow.app), 'mada_tool_calls_total', { tool: 'bash', outcome: 'timeout' })).toBe(1);
    } finally {
      await slow.close();
    }
  });

  it("counts a shell command stopped by its own timer as a timeout, as when the executor's fires", async () => {
    // The command's own 1 s limit ends it long before TOOL_TIMEOUT_SECONDS (120 s by default) could.
    model.push(scripted.toolCalls({ name: 'bash', arguments: { command: 'node -e "setTimeout(() => {}, 5000)"', timeout: 1 } }), scripted.text('It took too long.'));
    const response = await t.app.inject({ method: 'POST', url: '/agents/run', payload: { agent_type: 'task', prompt: 'Wait', mode: 'auto_accept' } });
    expect(response.json()).toMatchObject({ success: true });
    expect(sample(await scrape(t.app), 'mada_tool_calls_total', { tool: 'bash', outcome: 'timeout' })).toBe(1);
  });

  it('counts a conversation turn as one run of its agent', async () => {
    model.push(scripted.toolCalls({ name: 'read_file', arguments: { file_path: join(t.workdir, 'notes.txt') } }), scripted.text('42'));
    const created = await t.app.inject({ method: 'POST', url: '/conversations/', payload: { agent_type: 'explore', working_dir: t.workdir } });
    const id = (created.json() as { id: string }).id;
    const turn = await t.app.inject({ method: 'POST', url: `/conversations/${id}/messages`, payload: { content: 'What is the answer?' } });
    expect(turn.statusCode).toBe(200);

    const text = await scrape(t.app);
    expect(sample(text, 'mada_agent_runs_total', { agent: 'explore', status: 'succeeded' })).toBe(1);
    expect(sample(text, 'mada_http_requests_total', { method: 'POST', route: '/conversations/:conversation_id/messages', status: '200' })).toBe(1);
    expect(text).not.toContain(id);
  });
});
