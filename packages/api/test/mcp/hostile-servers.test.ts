import { copyFileSync, existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { scripted, startScriptedModel, type ScriptedModel } from '@mada/testkit';
import { afterEach, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../support/app.js';
import { outsideDir, runToEnd, thinkingTexts, toolResultBefore, writeConfig } from './support.js';

/** The hostile server, copied where the sandbox may read it (SANDBOX_READ_PATHS). */
function hostileServer(): { dir: string; script: string } {
  const dir = outsideDir('mada-mcp-hostile-');
  const script = join(dir, 'hostile-server.mjs');
  copyFileSync(fileURLToPath(new URL('./hostile-server.mjs', import.meta.url)), script);
  return { dir, script };
}

/** Servers that misbehave never stall a run: each gets a clear error or is left out with a warning. */
describe('hostile MCP servers', { timeout: 60_000 }, () => {
  let model: ScriptedModel;
  let t: TestApp;
  let address: string;

  async function boot(servers: Record<string, string>, env: Record<string, string> = {}): Promise<void> {
    const { dir, script } = hostileServer();
    model = await startScriptedModel();
    const config = writeConfig(Object.fromEntries(Object.entries(servers).map(([name, how]) => [name, { command: 'node', args: [script, how] }])));
    t = await createTestApp({ model: { url: model.url }, env: { MCP_CONFIG_FILE: config, SANDBOX_READ_PATHS: dir, RATE_LIMIT_PER_MINUTE: '0', ...env } });
    address = await t.app.listen({ port: 0, host: '127.0.0.1' });
  }

  afterEach(async () => {
    await t?.close();
    await model?.close();
  });

  it('skips lines on stdout that are not MCP messages, says so, and still runs the call', async () => {
    await boot({ noisy: 'garbage' });
    model.push(scripted.toolCalls({ name: 'mcp__noisy__ping', arguments: {} }), scripted.text('done'));
    const { run, events } = await runToEnd(address, {});
    expect(run.status).toBe('succeeded');
    expect(toolResultBefore(model, 1)).toBe('pong');
    expect(thinkingTexts(events).join('\n')).toMatch(/MCP server "noisy" wrote \d+ line\(s\) on stdout that are not MCP messages/);
  });

  it('gives up on a server that never answers initialize within MCP_START_TIMEOUT_SECONDS: the run goes on without its tools', async () => {
    await boot({ mute: 'silent', fine: 'garbage' }, { MCP_START_TIMEOUT_SECONDS: '2' });
    model.push(scripted.toolCalls({ name: 'mcp__fine__ping', arguments: {} }), scripted.text('done'));
    const started = Date.now();
    const { run, events } = await runToEnd(address, {});
    expect(run.status).toBe('succeeded');
    expect(Date.now() - started).toBeLessThan(30_000);
    expect(thinkingTexts(events).join('\n')).toContain('MCP server "mute" is unavailable, so its tools are left out: it failed to start: it did not answer within 2 s');
    const names = (model.requests[0]?.tools ?? []).map((tool) => tool.name);
    expect(names).toContain('mcp__fine__ping');
    expect(names.some((name) => name.startsWith('mcp__mute__'))).toBe(false);
    expect(toolResultBefore(model, 1)).toBe('pong');
  });

  it('stops a server that sends a 50 MB result and gives the call a clear error', async () => {
    await boot({ big: 'huge' });
    model.push(scripted.toolCalls({ name: 'mcp__big__ping', arguments: {} }), scripted.text('done'));
    const { run } = await runToEnd(address, {});
    expect(run.status).toBe('succeeded');
    expect(toolResultBefore(model, 1)).toBe('Error: MCP server "big": the server sent a message over 4096 KiB, so it was stopped');
    const health = await fetch(`${address}/health`);
    expect(health.status).toBe(200);
  });

  it('leaves out a tool whose schema is nested 1,000 deep, with a warning, and keeps the others', async () => {
    await boot({ nested: 'deep' });
    model.push(scripted.text('done'));
    const { events } = await runToEnd(address, { agent_type: 'explore' });
    const names = (model.requests[0]?.tools ?? []).map((tool) => tool.name);
    expect(names).toContain('mcp__nested__ping');
    expect(names).not.toContain('mcp__nested__deep');
    expect(thinkingTexts(events)).toContain('MCP tool mcp__nested__deep is left out: its input schema is nested more than 32 levels deep');
  });

  it('costs a crashed server only its tools, says why, and waits its backoff before starting it again', async () => {
    await boot({ fragile: 'crash' });
    model.push(scripted.toolCalls({ name: 'mcp__fragile__ping', arguments: {} }), scripted.text('done'));
    const first = await runToEnd(address, {});
    expect(first.run.status).toBe('succeeded');
    expect(toolResultBefore(model, 1)).toMatch(/^Error: MCP server "fragile": the server exited \(code 3\)/);
    model.push(scripted.text('done again'));
    const second = await runToEnd(address, { agent_type: 'explore' });
    expect(second.run.status).toBe('succeeded');
    expect(thinkingTexts(second.events).join('\n')).toMatch(/MCP server "fragile" is unavailable, so its tools are left out: it stopped: the server exited \(code 3\); it is tried again in \d+ s/);
  });

  it("cuts a server's megabyte error, and drops its terminal escapes, before it reaches the run's events or the model", async () => {
    await boot({ loud: 'loud-error', garbled: 'loud-start' });
    model.push(scripted.toolCalls({ name: 'mcp__loud__ping', arguments: {} }), scripted.text('done'));
    const { run, events } = await runToEnd(address, {});
    expect(run.status).toBe('succeeded');
    expect(toolResultBefore(model, 1)).toMatch(/^Error: MCP server "loud": MCP error -32603: e{100,} \[cut at 2000 characters\]$/);
    const notice = thinkingTexts(events).find((text) => text.startsWith('MCP server "garbled"'));
    expect(notice).toMatch(/^MCP server "garbled" is unavailable, so its tools are left out: it failed to start: MCP error -32603: \uFFFD\[2J\uFFFD\]0;owned\uFFFDe+ \[cut at 2000 characters\]$/);
    expect(JSON.stringify(events).length).toBeLessThan(100_000);
  });

  it('gives a run that may not change files a server that sees the workspace read-only, whatever its tools claim', async () => {
    const workspace = outsideDir('mada-mcp-liar-');
    await boot({ liar: 'liar' }, { ALLOWED_PATHS: workspace });
    model.push(scripted.toolCalls({ name: 'mcp__liar__scribble', arguments: {} }), scripted.text('done'));
    const explore = await runToEnd(address, { agent_type: 'explore', working_dir: workspace });
    expect(explore.run.status).toBe('succeeded');
    expect(toolResultBefore(model, 1)).toBe('failed: EROFS');
    expect(existsSync(join(workspace, 'scribbled.txt'))).toBe(false);
    // A run that may write gets the writable process, as before.
    model.push(scripted.toolCalls({ name: 'mcp__liar__scribble', arguments: {} }), scripted.text('done'));
    const task = await runToEnd(address, { agent_type: 'task', working_dir: workspace });
    expect(task.run.status).toBe('succeeded');
    expect(toolResultBefore(model, 3)).toBe('wrote');
    expect(readFileSync(join(workspace, 'scribbled.txt'), 'utf8')).toBe('scribbled');
  });

  /** Whether `dir/heartbeat` grows within a second: it stops once everything the server started is gone. */
  const heartbeatGrows = async (dir: string): Promise<boolean> => {
    const size = (): number => statSync(join(dir, 'heartbeat')).size;
    const before = size();
    await new Promise((resolve) => setTimeout(resolve, 1000));
    return size() > before;
  };

  it('stops a server after MCP_IDLE_SECONDS unused, with everything it started', async () => {
    const workspace = outsideDir('mada-mcp-idle-');
    await boot({ spawner: 'spawner' }, { MCP_IDLE_SECONDS: '1', ALLOWED_PATHS: workspace });
    model.push(scripted.toolCalls({ name: 'mcp__spawner__ping', arguments: {} }), scripted.text('done'));
    await runToEnd(address, { working_dir: workspace });
    expect(toolResultBefore(model, 1)).toBe('pong');
    await expect.poll(() => heartbeatGrows(workspace), { timeout: 15_000, interval: 100 }).toBe(false);
  });

  it('stops every server at shutdown, with everything it started', async () => {
    const workspace = outsideDir('mada-mcp-shutdown-');
    await boot({ spawner: 'spawner' }, { ALLOWED_PATHS: workspace });
    model.push(scripted.toolCalls({ name: 'mcp__spawner__ping', arguments: {} }), scripted.text('done'));
    await runToEnd(address, { working_dir: workspace });
    expect(await heartbeatGrows(workspace)).toBe(true);
    await t.close();
    expect(await heartbeatGrows(workspace)).toBe(false);
  });
});
