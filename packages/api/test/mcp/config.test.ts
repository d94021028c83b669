import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseMcpConfig } from '../../src/mcp/config.js';
import { firstDuplicateKey } from '../../src/mcp/duplicate-keys.js';
import { runServiceToExit } from '../support/service-process.js';
import { outsideDir } from './support.js';

const parse = (text: string) => parseMcpConfig(text, '/etc/mada/mcp.json');

describe('MCP_CONFIG_FILE', () => {
  it('takes the published snippets as they are, plus users and tools', () => {
    const servers = parse(
      JSON.stringify({
        mcpServers: {
          github: { command: 'npx', args: ['-y', '@modelcontextprotocol/server-github'], env: { GITHUB_PERSONAL_ACCESS_TOKEN: 'tok' }, users: ['ann'] },
          docs: { type: 'http', url: 'https://docs.example/mcp', headers: { Authorization: 'Bearer x' }, tools: { deny: ['delete_*'] }, disabled: false },
        },
      }),
    );
    expect(servers.map((server) => [server.name, server.kind, server.users])).toEqual([
      ['github', 'stdio', ['ann']],
      ['docs', 'http', 'all'],
    ]);
    expect(servers[1]?.offers('search')).toBe(true);
    expect(servers[1]?.offers('delete_page')).toBe(false);
  });

  it('refuses what cannot work, each in one line naming the file', () => {
    expect(() => parse('{"mcpServers": {')).toThrow(/^\/etc\/mada\/mcp\.json is not valid JSON: /);
    expect(() => parse('{"mcpServers": {"a": {"command": "x"}, "b": {"command": "y"}, "a": {"command": "z"}}}')).toThrow(
      '/etc/mada/mcp.json: server "a" is named twice',
    );
    expect(() => parse('{"mcpServers": {"has space": {"command": "x"}}}')).toThrow(/server "has space" cannot make tool names mcp__<server>__<tool>/);
    expect(() => parse(`{"mcpServers": {"${'a'.repeat(57)}": {"command": "x"}}}`)).toThrow(/cannot make tool names/);
    expect(() => parse('{"mcpServers": {"old": {"type": "sse", "url": "https://x.example/sse"}}}')).toThrow(/the old SSE transport is not supported/);
    // mcp__gh__ent__wipe would be server "gh"'s tool "ent__wipe" as well as server "gh__ent"'s
    // "wipe": whichever a rule `mcp__gh__ent__*` was written for, the other could claim it.
    for (const name of ['gh__ent', 'gh_', '__gh', 'a___b']) {
      expect(() => parse(`{"mcpServers": {"gh": {"command": "x"}, "${name}": {"command": "y"}}}`), name).toThrow(
        `/etc/mada/mcp.json: server "${name}": a server name may not hold "__" nor end in "_": its tools' names would read as another server's`,
      );
    }
    expect(parse('{"mcpServers": {"_gh": {"command": "x"}, "g_h-1": {"command": "y"}}}').map((server) => server.name)).toEqual(['_gh', 'g_h-1']);
    expect(() => parse('{"mcpServers": {"u": {"url": "ftp://x.example"}}}')).toThrow(/server "u": url: /);
    expect(() => parse('{"mcpServers": {"u": {"command": "x", "users": ["../root"]}}}')).toThrow(/server "u": users/);
    expect(() => parse('{"servers": {}}')).toThrow('/etc/mada/mcp.json must hold {"mcpServers": {"<name>": {...}}}');
  });

  it('finds a repeated key in any object, strings with quotes and braces in them included', () => {
    expect(firstDuplicateKey('{"a": "}\\"{", "b": [{"a": 1, "a": 2}]}')).toEqual({ key: 'a', path: ['b', '[]'] });
    expect(firstDuplicateKey('{"a": {"x": 1}, "b": {"x": 2}}')).toBeUndefined();
  });

  it('stops start-up with one line', async () => {
    const dir = outsideDir('mada-mcp-main-');
    const file = join(dir, 'mcp.json');
    writeFileSync(file, '{"mcpServers": {"gh": {"command": "a", "env": {"TOKEN": "do-not-print-me"}}, "gh": {"command": "b"}}}');
    const { code, stderr } = await runServiceToExit({ MCP_CONFIG_FILE: file }, dir);
    expect(code).toBe(1);
    expect(stderr).toBe(`mada-api: Invalid setting MCP_CONFIG_FILE: ${file}: server "gh" is named twice\n`);
  });
});
