import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { scripted, startScriptedModel, type ScriptedModel } from '@mada/testkit';
import { pino } from 'pino';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { parseMcpConfig } from '../../src/mcp/config.js';
import { McpConnections } from '../../src/mcp/connections.js';
import { resultText } from '../../src/mcp/tool-result.js';
import { PathSandbox } from '../../src/tools/sandbox/paths.js';
import { createToolHost } from '../../src/tools/tool-host.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { testSettings } from '../tools/sandbox/support/project.js';
import { FILESYSTEM, NODE_MODULES, outsideDir, runToEnd, thinkingTexts, toolResultBefore, writeConfig } from './support.js';

/**
 * `@modelcontextprotocol/server-filesystem` (published) told to serve a directory outside the
 * user's workspace: inside the sandbox that directory does not exist, so nothing of it is read,
 * whatever the server was told. The same server given the workspace works there.
 */
describe('the sandbox holds for an MCP server given a path outside the workspace', { timeout: 60_000 }, () => {
  let model: ScriptedModel;
  let t: TestApp;
  let address: string;
  const SECRET = 'outside-secret-7d1e0b';

  afterEach(async () => {
    await t?.close();
    await model?.close();
  });

  it('cannot read or write the outside directory, and reads in the workspace', async () => {
    const outside = outsideDir('mada-mcp-outside-');
    writeFileSync(join(outside, 'secret.txt'), SECRET);
    const workspace = outsideDir('mada-mcp-workspace-');
    writeFileSync(join(workspace, 'notes.txt'), 'inside notes');
    model = await startScriptedModel();
    const config = writeConfig({
      fs_out: { command: 'node', args: [FILESYSTEM, outside] },
      // Both directories: the server starts, and the sandbox alone keeps it from the outside one.
      fs_both: { command: 'node', args: [FILESYSTEM, workspace, outside] },
    });
    t = await createTestApp({
      model: { url: model.url },
      env: { MCP_CONFIG_FILE: config, SANDBOX_READ_PATHS: NODE_MODULES, ALLOWED_PATHS: workspace, RATE_LIMIT_PER_MINUTE: '0' },
    });
    address = await t.app.listen({ port: 0, host: '127.0.0.1' });
    model.push(
      scripted.toolCalls({ name: 'mcp__fs_both__read_text_file', arguments: { path: join(outside, 'secret.txt') } }),
      scripted.toolCalls({ name: 'mcp__fs_out__read_text_file', arguments: { path: join(outside, 'secret.txt') } }),
      scripted.toolCalls({ name: 'mcp__fs_both__read_text_file', arguments: { path: join(workspace, 'notes.txt') } }),
      scripted.toolCalls({ name: 'mcp__fs_both__write_file', arguments: { path: join(outside, 'planted.txt'), content: 'planted' } }),
      scripted.text('done'),
    );
    const { run, events } = await runToEnd(address, { mode: 'auto_accept', working_dir: workspace });
    expect(run.status).toBe('succeeded');
    const everything = JSON.stringify(model.requests);
    expect(everything).not.toContain(SECRET);
    // The server finds no such directory inside the sandbox and refuses the path.
    expect(toolResultBefore(model, 1)).toMatch(/Access denied|ENOENT|^Error/);
    expect(toolResultBefore(model, 3)).toBe('inside notes');
    expect(existsSync(join(outside, 'planted.txt'))).toBe(false);
    expect(readFileSync(join(outside, 'secret.txt'), 'utf8')).toBe(SECRET);
    // fs_out serves only a directory it cannot see: it refuses to start, and says so.
    expect(thinkingTexts(events).join('\n')).toContain('MCP server "fs_out" is unavailable');
  });
});

/**
 * The same published server called directly through the connections, as a server that lies about
 * its write tool (or writes on its own) would be called by an explore run: the process started for
 * a run that may not change files sees the workspace read-only, whatever tool is called.
 */
describe('a read-only run gets a server process that cannot write the workspace', { timeout: 60_000 }, () => {
  let connections: McpConnections | undefined;
  const host = createToolHost();

  afterEach(async () => {
    await connections?.closeAll();
  });
  afterAll(() => host.gitlinks.close());

  it('fails write_file with a read-only error for read access, and writes for write access', async () => {
    const workspace = outsideDir('mada-mcp-readonly-');
    writeFileSync(join(workspace, 'notes.txt'), 'original');
    const [server] = parseMcpConfig(JSON.stringify({ mcpServers: { fs: { command: 'node', args: [FILESYSTEM, workspace] } } }), 'mcp.json');
    connections = new McpConnections({ tools: testSettings({ sandboxReadPaths: [NODE_MODULES] }), idleSeconds: 600, startTimeoutSeconds: 30 }, host, pino({ level: 'silent' }));
    const sandbox = new PathSandbox([workspace]);
    const signal = new AbortController().signal;
    const write = { path: join(workspace, 'notes.txt'), content: 'overwritten' };

    const reading = await connections.connection(server!, 'ann', sandbox, 'read');
    const refused = await connections.call(reading, 'write_file', write, signal);
    expect(refused.isError).toBe(true);
    expect(resultText(refused)).toMatch(/EROFS|read-only file system/i);
    expect(readFileSync(join(workspace, 'notes.txt'), 'utf8')).toBe('original');
    // Reading still works through that process.
    expect(resultText(await connections.call(reading, 'read_text_file', { path: join(workspace, 'notes.txt') }, signal))).toBe('original');

    const writing = await connections.connection(server!, 'ann', sandbox, 'write');
    expect(writing).not.toBe(reading);
    expect((await connections.call(writing, 'write_file', write, signal)).isError).not.toBe(true);
    expect(readFileSync(join(workspace, 'notes.txt'), 'utf8')).toBe('overwritten');
    // Each access keeps its own process: the read-only one is reused, and still cannot write.
    expect(await connections.connection(server!, 'ann', sandbox, 'read')).toBe(reading);
  });
});
