import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { scripted, startScriptedModel, type ScriptedModel } from '@mada/testkit';
import { afterEach, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../support/app.js';
import { sample } from '../support/metrics.js';
import { EVERYTHING, NODE_MODULES, outsideDir, runToEnd, thinkingTexts, toolResultBefore, writeConfig } from './support.js';

/**
 * `@modelcontextprotocol/server-everything` (published, nobody here wrote it) over stdio, started
 * by real agent runs inside the sandbox, judged by what the model was given and what the server did.
 */
describe('an stdio MCP server through agent runs', { timeout: 60_000 }, () => {
  let model: ScriptedModel;
  let t: TestApp;
  let address: string;
  const SECRET = 'mcp-secret-value-4f2a9c';

  async function boot(options: { env?: Record<string, string>; runtime?: { capabilities: string[] } } = {}): Promise<void> {
    model = await startScriptedModel(options.runtime === undefined ? {} : { runtime: options.runtime });
    const config = writeConfig({ everything: { command: 'node', args: [EVERYTHING, 'stdio'], env: { EVERYTHING_TOKEN: SECRET } } });
    t = await createTestApp({ model: { url: model.url }, env: { MCP_CONFIG_FILE: config, SANDBOX_READ_PATHS: NODE_MODULES, RATE_LIMIT_PER_MINUTE: '0', ...options.env } });
    address = await t.app.listen({ port: 0, host: '127.0.0.1' });
  }

  afterEach(async () => {
    await t?.close();
    await model?.close();
  });

  it('offers the server tools as mcp__everything__<tool> with their schemas and runs a call (native tool calls)', async () => {
    await boot();
    model.push(scripted.toolCalls({ name: 'mcp__everything__get-sum', arguments: { a: 2, b: 40 } }), scripted.text('done'));
    const { run, events } = await runToEnd(address, {});
    expect(run.status).toBe('succeeded');
    const offered = model.requests[0]?.tools ?? [];
    const sum = offered.find((tool) => tool.name === 'mcp__everything__get-sum');
    expect(sum?.parameters).toMatchObject({ type: 'object', properties: { a: { type: 'number' }, b: { type: 'number' } }, required: ['a', 'b'] });
    expect(JSON.stringify(sum?.parameters)).not.toContain('$schema');
    expect(toolResultBefore(model, 1)).toContain('42');
    expect(events.find((event) => event.event === 'tool_done')).toMatchObject({ tool: 'mcp__everything__get-sum' });
    // Counted like a built-in tool, under its MCP name.
    expect(sample(await t.metrics.render(), 'mada_tool_calls_total', { tool: 'mcp__everything__get-sum', outcome: 'ok' })).toBe(1);
  });

  it('runs the server inside the sandbox: its own env and a private HOME, none of the service environment', async () => {
    process.env.MADA_TEST_SERVICE_ONLY = 'service-only-value';
    try {
      await boot();
      model.push(scripted.toolCalls({ name: 'mcp__everything__get-env', arguments: {} }), scripted.text('done'));
      await runToEnd(address, {});
      const env = toolResultBefore(model, 1) ?? '';
      expect(env).toContain(SECRET);
      expect(env).toContain('"HOME": "/tmp/home"');
      expect(env).not.toContain('service-only-value');
    } finally {
      delete process.env.MADA_TEST_SERVICE_ONLY;
    }
  });

  it('describes the tools in the prompt and runs calls written as text for a model without native tool calls', async () => {
    await boot({ runtime: { capabilities: ['completion'] } });
    model.push(scripted.textToolCalls('tagged', [{ name: 'mcp__everything__echo', arguments: { message: 'hello from text' } }]), scripted.text('done'));
    const { run } = await runToEnd(address, {});
    expect(run.status).toBe('succeeded');
    expect(model.requests[0]?.tools ?? []).toHaveLength(0);
    expect(model.requests[0]?.messages[0]?.content).toContain('mcp__everything__echo');
    // The text protocol hands results back as messages the model reads, not as `tool` messages.
    expect(JSON.stringify(model.requests[1]?.messages.slice(2))).toContain('hello from text');
  });

  it('asks before a tool the server does not mark read-only, and an allow rule on mcp__everything__toggle-* lets it run', async () => {
    await boot();
    model.push(scripted.toolCalls({ name: 'mcp__everything__toggle-simulated-logging', arguments: {} }), scripted.text('done'));
    await runToEnd(address, { on_ask: 'deny' });
    expect(toolResultBefore(model, 1)).toBe('Needs approval, and this run cannot wait for it (on_ask=deny)');
    await t.close();
    await model.close();

    const rules = join(outsideDir('mada-mcp-rules-'), 'rules.json');
    writeFileSync(rules, JSON.stringify({ rules: [{ tool: 'mcp__everything__toggle-*', action: 'allow' }] }));
    await boot({ env: { APPROVAL_RULES_FILE: rules } });
    model.push(scripted.toolCalls({ name: 'mcp__everything__toggle-simulated-logging', arguments: {} }), scripted.text('done'));
    await runToEnd(address, { on_ask: 'deny' });
    expect(toolResultBefore(model, 1)).toMatch(/logging/i);
    expect(toolResultBefore(model, 1)).not.toContain('Needs approval');
  });

  it('gives explore only the read-only tools', async () => {
    await boot();
    model.push(scripted.text('nothing to do'));
    await runToEnd(address, { agent_type: 'explore' });
    const names = (model.requests[0]?.tools ?? []).map((tool) => tool.name);
    expect(names).toContain('mcp__everything__echo');
    expect(names).not.toContain('mcp__everything__toggle-simulated-logging');
  });

  it('names content that is not text instead of dropping it', async () => {
    await boot();
    model.push(scripted.toolCalls({ name: 'mcp__everything__get-tiny-image', arguments: {} }), scripted.text('done'));
    await runToEnd(address, {});
    expect(toolResultBefore(model, 1)).toMatch(/\[image content \(image\/png, \d+ bytes\), not shown\]/);
  });

  it('keeps the server secret out of the run events and out of /health', async () => {
    await boot();
    model.push(scripted.toolCalls({ name: 'mcp__everything__echo', arguments: { message: 'x' } }), scripted.text('done'));
    const { events } = await runToEnd(address, {});
    expect(thinkingTexts(events)).toEqual([]);
    const health = await (await fetch(`${address}/health`)).text();
    expect(health).not.toContain(SECRET);
    expect(JSON.stringify(events)).not.toContain(SECRET);
  });
});
