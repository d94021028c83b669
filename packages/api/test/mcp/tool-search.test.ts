import { rmSync } from 'node:fs';
import { dirname } from 'node:path';
import { scripted, startScriptedModel, type ScriptedModel } from '@mada/testkit';
import { afterEach, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../support/app.js';
import { receivedTokens } from '../support/request-tokens.js';
import { EVERYTHING, NODE_MODULES, runToEnd, thinkingTexts, toolResultBefore, writeConfig } from './support.js';

/**
 * TEAMS.md section 12: MCP tool definitions count against the model's window, and when they would
 * take more than a quarter of it the agent gets one `mcp_tools` tool instead, which finds tools by
 * what they do and loads them for the rest of the run. Against two servers of the published
 * `@modelcontextprotocol/server-everything` (26 tools), whose definitions (about 2,200 tokens)
 * take more than a quarter of a 6,144-token window and much less than a quarter of a 32,768-token one.
 */
describe('mcp_tools: MCP tools found and loaded when their definitions would crowd the window', { timeout: 60_000 }, () => {
  let model: ScriptedModel;
  let t: TestApp;
  let address: string;

  let config: string | undefined;

  async function boot(window: number, capabilities = ['completion', 'tools']): Promise<void> {
    model = await startScriptedModel({ runtime: { contextLength: window, capabilities } });
    const server = { command: 'node', args: [EVERYTHING, 'stdio'] };
    config = writeConfig({ everything: server, more: server });
    t = await createTestApp({ model: { url: model.url }, env: { MCP_CONFIG_FILE: config, SANDBOX_READ_PATHS: NODE_MODULES, RATE_LIMIT_PER_MINUTE: '0' } });
    address = await t.app.listen({ port: 0, host: '127.0.0.1' });
  }

  afterEach(async () => {
    await t?.close();
    await model?.close();
    if (config !== undefined) rmSync(dirname(config), { recursive: true, force: true });
    config = undefined;
  });

  const names = (index: number): string[] => (model.requests[index]?.tools ?? []).map((tool) => tool.name);

  it('offers mcp_tools instead of the definitions on a small window, and a tool it finds can be called next (native tool calls)', async () => {
    await boot(6144);
    model.push(
      scripted.toolCalls({ name: 'mcp_tools', arguments: { query: 'add up the sum of two numbers' } }),
      scripted.toolCalls({ name: 'mcp__everything__get-sum', arguments: { a: 2, b: 40 } }),
      scripted.text('the sum is 42'),
    );
    const { run, events } = await runToEnd(address, {});
    expect(run).toMatchObject({ status: 'succeeded', response: 'the sum is 42' });

    // The first request: the built-in tools and mcp_tools, no MCP definition.
    expect(names(0)).toContain('mcp_tools');
    expect(names(0)).toContain('read_file');
    expect(names(0).filter((name) => name.startsWith('mcp__'))).toEqual([]);
    const search = model.requests[0]!.tools.find((tool) => tool.name === 'mcp_tools');
    expect(search?.description).toMatch(/\d+ tools of the MCP server\(s\) everything, more are not listed/);
    expect(thinkingTexts(events)).toEqual([
      expect.stringMatching(/^The definitions of \d+ MCP tools would take \d+ tokens, more than a quarter of the model's context window \(6144 tokens\): the agent finds and loads the ones it needs with mcp_tools\.$/),
    ]);

    // The search loaded get-sum, and the next request offers it (and only what was found).
    expect(toolResultBefore(model, 1)).toMatch(/^Loaded, callable from your next answer:\n- mcp__everything__get-sum: .*\n- mcp__more__get-sum: /);
    expect(names(1)).toContain('mcp__everything__get-sum');
    expect(names(1)).not.toContain('mcp__everything__get-env');
    expect(toolResultBefore(model, 2)).toContain('42');
    // Every request stayed within the window, a quarter of it kept for the answer.
    for (const request of model.requests) expect(receivedTokens(request)).toBeLessThanOrEqual(6144 - 1536);
  });

  it('describes the loaded tools in the system prompt of a model without native tool calls', async () => {
    await boot(6144, ['completion']);
    model.push(
      scripted.textToolCalls('tagged', [{ name: 'mcp_tools', arguments: { query: 'echo' } }]),
      scripted.textToolCalls('tagged', [{ name: 'mcp__everything__echo', arguments: { message: 'hello through the search' } }]),
      scripted.text('done'),
    );
    const { run } = await runToEnd(address, {});
    expect(run.status).toBe('succeeded');
    const system = (index: number): string => model.requests[index]?.messages[0]?.content ?? '';
    expect(system(0)).toContain('mcp_tools');
    expect(system(0)).not.toContain('mcp__everything__echo');
    expect(system(1)).toContain('mcp__everything__echo');
    expect(JSON.stringify(model.requests[2]?.messages.slice(2))).toContain('hello through the search');
  });

  it('says when nothing matches, and a tool not loaded stays unknown', async () => {
    await boot(6144);
    model.push(
      scripted.toolCalls({ name: 'mcp_tools', arguments: { query: 'launch rockets' } }),
      scripted.toolCalls({ name: 'mcp__everything__echo', arguments: { message: 'x' } }),
      scripted.text('done'),
    );
    await runToEnd(address, {});
    expect(toolResultBefore(model, 1)).toBe('No MCP tool matches "launch rockets". Try other words for what the tool should do.');
    expect(toolResultBefore(model, 2)).toMatch(/^Error: Unknown tool 'mcp__everything__echo'/);
  });

  it('offers the definitions themselves when they fit a quarter of the window', async () => {
    await boot(32_768);
    model.push(scripted.text('done'));
    const { events } = await runToEnd(address, { agent_type: 'explore' });
    expect(names(0)).toContain('mcp__everything__get-sum');
    expect(names(0)).not.toContain('mcp_tools');
    expect(thinkingTexts(events)).toEqual([]);
  });
});
