import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { toolSearch } from '../../src/agents/tool-search.js';
import { succeed, type Tool, type ToolContext } from '../../src/tools/tool.js';

/** An MCP tool as the tool source makes one: a name, a description, its server's schema. */
function mcpTool(name: string, description: string): Tool {
  return {
    name,
    description,
    parameters: z.record(z.string(), z.unknown()),
    inputSchema: { type: 'object', properties: {} },
    readOnly: true,
    startArgs: (params) => params as Record<string, unknown>,
    execute: () => Promise.resolve(succeed('')),
  };
}

const TOOLS = [
  mcpTool('mcp__github__create_issue', 'Create a new issue in a GitHub repository'),
  mcpTool('mcp__github__search_code', 'Search for code across GitHub repositories'),
  mcpTool('mcp__db__runQuery', 'Run a read-only SQL query against the database'),
  mcpTool('mcp__docs__fetch-page', 'Fetch a documentation page and return it as markdown. Mentions issues in passing.'),
];

const context = {} as ToolContext;

function searcher(budget = 10_000): { search(query: string): Promise<string>; loaded: string[] } {
  const loaded: string[] = [];
  const tool = toolSearch(TOOLS, budget, (found) => loaded.push(...found.map((t) => t.name)));
  return {
    loaded,
    search: async (query) => {
      const result = await tool.execute(tool.parameters.parse({ query }), context);
      return result.success ? result.data : result.error;
    },
  };
}

describe('mcp_tools search', () => {
  it("ranks a tool whose name holds the query's words above one whose description mentions them", async () => {
    const s = searcher();
    const text = await s.search('create an issue');
    expect(s.loaded).toEqual(['mcp__github__create_issue', 'mcp__docs__fetch-page']);
    expect(text.indexOf('mcp__github__create_issue')).toBeLessThan(text.indexOf('mcp__docs__fetch-page'));
  });

  it('splits names written in camelCase, snake_case and kebab-case, and matches longer word forms', async () => {
    const s = searcher();
    await s.search('query');
    expect(s.loaded).toEqual(['mcp__db__runQuery']);
    await s.search('fetching pages');
    expect(s.loaded).toContain('mcp__docs__fetch-page');
  });

  it("finds a tool by its full name or its server's name for it, and says what was already loaded", async () => {
    const s = searcher();
    await s.search('mcp__github__search_code');
    expect(s.loaded).toEqual(['mcp__github__search_code']);
    const again = await s.search('search_code');
    expect(again).toBe('Already loaded:\n- mcp__github__search_code: Search for code across GitHub repositories');
    expect(s.loaded).toEqual(['mcp__github__search_code']);
  });

  it('loads no more than its budget of definitions, and names what it found but left out', async () => {
    const s = searcher(40);
    const text = await s.search('github repository');
    expect(s.loaded).toEqual(['mcp__github__create_issue']);
    expect(text).toContain('Found but not loaded (the loaded tools would take more than a quarter of the context window):\n- mcp__github__search_code');
  });

  it('says when nothing matches, and ignores words that say nothing', async () => {
    const s = searcher();
    expect(await s.search('the tool for a')).toBe('No MCP tool matches "the tool for a". Try other words for what the tool should do.');
    expect(s.loaded).toEqual([]);
  });
});
