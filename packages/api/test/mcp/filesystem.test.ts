import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { scripted, startScriptedModel, type ScriptedModel } from '@mada/testkit';
import { afterEach, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../support/app.js';
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
