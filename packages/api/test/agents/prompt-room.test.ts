import { afterAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ServiceMetrics } from '../../src/metrics/service-metrics.js';
import { createModelClient } from '../../src/model/index.js';
import { createEngine } from '../../src/services.js';
import { loadSettings } from '../../src/settings.js';
import { countTokens } from '../../src/tokens/count.js';
import { createToolHost } from '../../src/tools/tool-host.js';
import { succeed, type Tool, type ToolSource } from '../../src/tools/tool.js';
import { tempDir } from '../../../../test/helpers/temp-dirs.js';

/** An MCP tool as the tool source makes one, with a description of about `words` words. */
function mcpTool(name: string, readOnly: boolean, words: number): Tool {
  return {
    name,
    description: Array.from({ length: words }, (_, i) => `word${i}`).join(' '),
    parameters: z.record(z.string(), z.unknown()),
    inputSchema: { type: 'object', properties: { query: { type: 'string' } } },
    readOnly,
    startArgs: (params) => params as Record<string, unknown>,
    execute: () => Promise.resolve(succeed('')),
  };
}

/**
 * The room a summarization prompt gets (the `explore` agent in mode `plan`) leaves space for the
 * MCP tool definitions that agent is offered in the run: without them a conversation with MCP
 * servers sent summaries over the model's window.
 */
describe("the summarizer's prompt room counts the MCP tools the summarizing run is offered", () => {
  const dir = tempDir('mada-prompt-room-');
  const settings = loadSettings({ LLM_BASE_URL: 'http://127.0.0.1:9', LLM_NUM_CTX: '32768', ALLOWED_PATHS: dir }, dir);
  const host = createToolHost();
  afterAll(() => host.gitlinks.close());
  const engine = (tools: Tool[]) => {
    const source: ToolSource | undefined = tools.length === 0 ? undefined : { toolsFor: () => Promise.resolve(tools) };
    return createEngine(settings, createModelClient(settings), dir, new ServiceMetrics(), host, false, source);
  };
  const room = (tools: Tool[]) => engine(tools).promptRoom('explore', 'plan', dir);

  it('is smaller by at least the read-only tools’ descriptions, and not by tools the agent is not offered', async () => {
    const reader = mcpTool('mcp__docs__search', true, 600);
    const writer = mcpTool('mcp__docs__publish', false, 600);
    const bare = await room([]);
    const withReader = await room([reader]);
    expect(bare - withReader).toBeGreaterThanOrEqual(countTokens(reader.description));
    // explore in mode plan gets read-only tools only: the writer's definition is not in its requests.
    expect(await room([reader, writer])).toBe(withReader);
  });

  it('counts mcp_tools alone when the definitions would take more than a quarter of the window', async () => {
    const many = Array.from({ length: 40 }, (_, i) => mcpTool(`mcp__docs__tool${i}`, true, 400));
    const bare = await room([]);
    const deferred = await room(many);
    expect(deferred).toBeLessThan(bare);
    // Far less than the definitions themselves: they are found through mcp_tools, not sent.
    expect(bare - deferred).toBeLessThan(countTokens(many[0]!.description) * 2);
  });
});
