import { spawn, type ChildProcess } from 'node:child_process';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { scripted, startScriptedModel, type ScriptedModel } from '@mada/testkit';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { afterEach, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../support/app.js';
import { EVERYTHING, runToEnd, thinkingTexts, toolResultBefore, writeConfig } from './support.js';

const listen = async (server: Server): Promise<number> => {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
};

/** server-everything over Streamable HTTP on loopback; resolves once it listens. */
async function startEverythingHttp(): Promise<{ url: string; child: ChildProcess }> {
  const probe = createServer();
  const port = await listen(probe);
  await new Promise((resolve) => probe.close(resolve));
  const child = spawn(process.execPath, [EVERYTHING, 'streamableHttp'], { env: { ...process.env, PORT: String(port) }, stdio: ['ignore', 'ignore', 'pipe'] });
  await new Promise<void>((resolve, reject) => {
    let text = '';
    child.stderr?.on('data', (chunk: Buffer) => {
      text += chunk.toString();
      if (text.includes('listening')) resolve();
    });
    child.once('exit', () => reject(new Error(`server-everything exited: ${text}`)));
  });
  return { url: `http://127.0.0.1:${port}/mcp`, child };
}

const KIB_64 = 'x'.repeat(64 * 1024);

/**
 * The SDK's own server over Streamable HTTP, stateless, answering each call as an event stream:
 * `chatty` logs 80 messages of 64 KiB (5 MiB in all) before its answer, `huge` answers 5 MiB at once.
 */
async function startStreamingServer(servers: Server[]): Promise<string> {
  const http = createServer((request, response) => {
    const mcp = new McpServer({ name: 'streaming', version: '1.0.0' }, { capabilities: { logging: {} } });
    mcp.registerTool('chatty', { description: 'logs a lot, then answers', annotations: { readOnlyHint: true } }, async (extra) => {
      for (let i = 0; i < 80; i++) await extra.sendNotification({ method: 'notifications/message', params: { level: 'info', data: KIB_64 } });
      return { content: [{ type: 'text', text: 'all said' }] };
    });
    mcp.registerTool('huge', { description: 'one answer of 5 MiB', annotations: { readOnlyHint: true } }, () => ({ content: [{ type: 'text', text: KIB_64.repeat(80) }] }));
    const transport = new StreamableHTTPServerTransport({}) // no session id generator: stateless;
    response.on('close', () => void transport.close());
    void mcp.connect(transport).then(() => transport.handleRequest(request, response));
  });
  servers.push(http);
  return `http://127.0.0.1:${await listen(http)}/mcp`;
}

describe('a remote MCP server over Streamable HTTP', { timeout: 60_000 }, () => {
  let model: ScriptedModel;
  let t: TestApp;
  let address: string;
  const servers: Server[] = [];
  let child: ChildProcess | undefined;
  const SECRET = 'Bearer remote-secret-91c2';

  async function boot(config: Record<string, unknown>): Promise<void> {
    model = await startScriptedModel();
    t = await createTestApp({ model: { url: model.url }, env: { MCP_CONFIG_FILE: writeConfig(config), RATE_LIMIT_PER_MINUTE: '0' } });
    address = await t.app.listen({ port: 0, host: '127.0.0.1' });
  }

  afterEach(async () => {
    await t?.close();
    await model?.close();
    child?.kill('SIGKILL');
    for (const server of servers.splice(0)) server.close();
  });

  it('offers and calls the tools of server-everything', async () => {
    const everything = await startEverythingHttp();
    child = everything.child;
    await boot({ remote: { type: 'http', url: everything.url, headers: { Authorization: SECRET } } });
    model.push(scripted.toolCalls({ name: 'mcp__remote__echo', arguments: { message: 'over http' } }), scripted.text('done'));
    const { run } = await runToEnd(address, {});
    expect(run.status).toBe('succeeded');
    expect((model.requests[0]?.tools ?? []).map((tool) => tool.name)).toContain('mcp__remote__get-sum');
    expect(toolResultBefore(model, 1)).toContain('over http');
  });

  it('does not follow a redirect to another host with the configured headers', async () => {
    const seen: IncomingHttpHeaders[] = [];
    const elsewhere = createServer((request, response) => {
      seen.push(request.headers);
      response.writeHead(404).end();
    });
    servers.push(elsewhere);
    const elsewherePort = await listen(elsewhere);
    const redirecting = createServer((_request, response) => {
      // `localhost` is another host than `127.0.0.1`, as far as an origin goes.
      response.writeHead(307, { location: `http://localhost:${elsewherePort}/mcp` }).end();
    });
    servers.push(redirecting);
    const port = await listen(redirecting);
    await boot({ moved: { type: 'http', url: `http://127.0.0.1:${port}/mcp`, headers: { Authorization: SECRET } } });
    model.push(scripted.text('done'));
    const { run, events } = await runToEnd(address, { agent_type: 'explore' });
    expect(run.status).toBe('succeeded');
    expect(seen).toEqual([]);
    const said = thinkingTexts(events).join('\n');
    expect(said).toContain('MCP server "moved" is unavailable');
    expect(said).toMatch(/Redirect to http:\/\/localhost:\d+\/mcp not followed/);
    expect(said).not.toContain(SECRET);
  });

  it('caps each event of a stream at 4 MiB, not the stream: a call that logs 5 MiB still answers, an answer of 5 MiB does not', async () => {
    const url = await startStreamingServer(servers);
    await boot({ streaming: { type: 'http', url } });
    model.push(scripted.toolCalls({ name: 'mcp__streaming__chatty', arguments: {} }), scripted.toolCalls({ name: 'mcp__streaming__huge', arguments: {} }), scripted.text('done'));
    const { run } = await runToEnd(address, {});
    expect(run.status).toBe('succeeded');
    expect(toolResultBefore(model, 1)).toBe('all said');
    expect(toolResultBefore(model, 2)).toBe('Error: MCP server "streaming": the server sent an event over 4096 KiB, so the connection was closed');
  });
});
