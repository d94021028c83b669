import { existsSync, writeFileSync } from 'node:fs';
import { request, type IncomingMessage } from 'node:http';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ElicitRequestSchema, type CallToolResult, type ElicitRequest, type ElicitResult, type Progress } from '@modelcontextprotocol/sdk/types.js';
import { scripted, startScriptedModel, type ScriptedModel } from '@mada/testkit';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../support/app.js';
import { until } from '../support/until.js';
import type { Json } from './support.js';

const KEYS = { ann: 'key-for-ann-0123456789abcdef', bob: 'key-for-bob-0123456789abcdef' };
const ENDED = new Set(['succeeded', 'failed', 'cancelled', 'interrupted']);

/**
 * mada as an MCP server (`POST /mcp`), driven by the official SDK's client (nobody here wrote it)
 * over real HTTP on loopback, with agent runs on the scripted model.
 */
describe('POST /mcp with the official MCP client', { timeout: 60_000 }, () => {
  let model: ScriptedModel;
  let t: TestApp;
  let address: string;
  const clients: Client[] = [];

  beforeEach(async () => {
    model = await startScriptedModel();
    t = await createTestApp({ model: { url: model.url }, env: { API_KEYS: `ann:${KEYS.ann},bob:${KEYS.bob}`, RATE_LIMIT_PER_MINUTE: '0' } });
    address = await t.app.listen({ port: 0, host: '127.0.0.1' });
  });
  afterEach(async () => {
    await Promise.allSettled(clients.splice(0).map((client) => client.close()));
    await t.close();
    await model.close();
  });

  const headers = (user: keyof typeof KEYS = 'ann') => ({ 'x-api-key': KEYS[user], 'content-type': 'application/json' });
  const getJson = async (path: string, user: keyof typeof KEYS = 'ann') => (await (await fetch(`${address}${path}`, { headers: headers(user) })).json()) as Json;
  const runOf = (result: CallToolResult) => (result._meta as { run_id: string }).run_id;
  const textOf = (result: CallToolResult) => result.content.map((part) => (part.type === 'text' ? part.text : '')).join('');

  async function connect(options: { key?: string; elicit?: (request: ElicitRequest) => ElicitResult } = {}): Promise<Client> {
    const client = new Client({ name: 'mada-test-client', version: '1.0.0' }, { capabilities: options.elicit ? { elicitation: {} } : {} });
    if (options.elicit) {
      const answer = options.elicit;
      client.setRequestHandler(ElicitRequestSchema, (request) => answer(request));
    }
    const transport = new StreamableHTTPClientTransport(new URL(`${address}/mcp`), { requestInit: { headers: { 'x-api-key': options.key ?? KEYS.ann } } });
    await client.connect(transport);
    clients.push(client);
    return client;
  }

  it('lists explore, plan and task with their arguments', async () => {
    const client = await connect();
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name).sort()).toEqual(['explore', 'plan', 'task']);
    const explore = tools.find((tool) => tool.name === 'explore')!;
    expect(explore.inputSchema).toMatchObject({ type: 'object', required: ['prompt'] });
    expect(Object.keys(explore.inputSchema.properties ?? {}).sort()).toEqual(['mode', 'model', 'prompt', 'working_dir']);
    expect(explore.annotations).toMatchObject({ readOnlyHint: true });
    expect(tools.find((tool) => tool.name === 'task')!.annotations).toMatchObject({ readOnlyHint: false });
  });

  it("answers explore with the run's final text, stores the run as the caller's, and reports progress", async () => {
    writeFileSync(join(t.workdir, 'notes.txt'), 'the answer is 42\n');
    model.push(scripted.toolCalls({ name: 'read_file', arguments: { file_path: join(t.workdir, 'notes.txt') } }), scripted.text('The notes say 42.'));
    const client = await connect();
    const progress: Progress[] = [];
    const result = (await client.callTool({ name: 'explore', arguments: { prompt: 'What do the notes say?' } }, undefined, {
      onprogress: (step) => progress.push(step),
    })) as CallToolResult;
    expect(result.isError).toBeFalsy();
    expect(textOf(result)).toBe('The notes say 42.');
    expect(model.requests[0]?.messages.at(-1)?.content).toContain('What do the notes say?');
    expect(model.requests[1]?.messages.at(-1)?.content).toContain('the answer is 42');

    const runs = (await getJson('/runs')).runs as Json[];
    expect(runs).toHaveLength(1);
    expect(runs[0]).toMatchObject({ id: runOf(result), agent_type: 'explore', status: 'succeeded', prompt: 'What do the notes say?', response: 'The notes say 42.' });
    expect(((await getJson('/runs', 'bob')).runs as Json[]).length).toBe(0);

    const messages = progress.map((step) => step.message);
    expect(messages).toContain('Calling read_file');
    expect(messages).toContain('read_file: ok');
    expect(progress.map((step) => step.progress)).toEqual(progress.map((_, index) => index + 1));
  });

  it('answers isError with the reason when the run fails, and when the call is refused as POST /runs refuses it', async () => {
    model.push(scripted.httpError(400, 'model exploded'), scripted.httpError(400, 'model exploded'));
    const client = await connect();
    const failed = (await client.callTool({ name: 'plan', arguments: { prompt: 'plan it' } })) as CallToolResult;
    expect(failed.isError).toBe(true);
    expect(textOf(failed)).toContain('model exploded');
    expect((await getJson(`/runs/${runOf(failed)}`)).status).toBe('failed');

    const outside = (await client.callTool({ name: 'explore', arguments: { prompt: 'x', working_dir: '/etc' } })) as CallToolResult;
    expect(outside).toMatchObject({ isError: true, content: [{ type: 'text', text: 'Working directory not allowed: /etc' }] });
    const unknown = (await client.callTool({ name: 'explore', arguments: { prompt: 'x', model: 'no-such-model' } })) as CallToolResult;
    expect(unknown).toMatchObject({ isError: true, content: [{ type: 'text', text: 'Unknown model: no-such-model' }] });
    expect((await getJson('/runs')).total).toBe(1);
  });

  it('refuses a wrong key with 401, and keeps one user out of another user’s session', async () => {
    await expect(connect({ key: 'not-a-key-0123456789' })).rejects.toMatchObject({ code: 401, message: expect.stringContaining('Invalid API key') as string });
    const ann = await connect();
    await ann.listTools();
    const sessionId = (ann.transport as StreamableHTTPClientTransport).sessionId!;
    const asBob = await fetch(`${address}/mcp`, {
      method: 'POST',
      headers: { ...headers('bob'), accept: 'application/json, text/event-stream', 'mcp-session-id': sessionId, 'mcp-protocol-version': '2025-06-18' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'tools/list' }),
    });
    expect(asBob.status).toBe(404);
    expect(await asBob.json()).toMatchObject({ jsonrpc: '2.0', error: { code: -32001, message: 'Session not found' } });
    const endedByBob = await fetch(`${address}/mcp`, { method: 'DELETE', headers: { 'x-api-key': KEYS.bob, 'mcp-session-id': sessionId } });
    expect(endedByBob.status).toBe(404);
    expect((await ann.listTools()).tools).toHaveLength(3);
  });

  it('answers bodies that are not JSON-RPC with JSON-RPC errors, and GET with 405', async () => {
    const post = (body: string, extra: Record<string, string> = {}) =>
      fetch(`${address}/mcp`, { method: 'POST', headers: { ...headers(), accept: 'application/json, text/event-stream', ...extra }, body });
    const garbage = await post('{"jsonrpc": "2.0", "id": 1, "method": ');
    expect(garbage.status).toBe(400);
    expect(await garbage.json()).toEqual({ jsonrpc: '2.0', error: { code: -32700, message: 'Parse error: Invalid JSON' }, id: null });
    const notRpc = await post(JSON.stringify({ hello: 'world' }));
    expect(notRpc.status).toBe(400);
    expect(await notRpc.json()).toMatchObject({ jsonrpc: '2.0', error: { code: -32000 }, id: null });
    const invalid = await post(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: 'nonsense' }));
    expect(invalid.status).toBe(400);
    expect(await invalid.json()).toMatchObject({ jsonrpc: '2.0', error: { code: expect.any(Number) as number }, id: null });
    const tooLarge = await post(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { pad: 'x'.repeat(3 * 1024 * 1024) } }));
    expect(tooLarge.status).toBe(413);
    const get = await fetch(`${address}/mcp`, { headers: { ...headers(), accept: 'text/event-stream' } });
    expect(get.status).toBe(405);
    expect(get.headers.get('allow')).toBe('POST, DELETE');
  });

  it("puts a run's approval to a client that can answer elicitations, and runs the tool once it approves", async () => {
    writeFileSync(join(t.workdir, 'victim.txt'), 'x');
    model.push(scripted.toolCalls({ name: 'bash', arguments: { command: 'rm victim.txt' } }), scripted.text('removed it'));
    const asked: string[] = [];
    const client = await connect({
      elicit: (request) => {
        asked.push(request.params.message);
        return { action: 'accept', content: { decision: 'approve' } };
      },
    });
    const result = (await client.callTool({ name: 'task', arguments: { prompt: 'remove victim.txt' } })) as CallToolResult;
    expect(result.isError).toBeFalsy();
    expect(textOf(result)).toBe('removed it');
    expect(asked).toHaveLength(1);
    expect(asked[0]).toContain('bash');
    expect(asked[0]).toContain('rm victim.txt');
    expect(existsSync(join(t.workdir, 'victim.txt'))).toBe(false);
    const approvals = (await getJson('/approvals')).approvals as Json[];
    expect(approvals).toMatchObject([{ run_id: runOf(result), tool: 'bash', status: 'approved' }]);
  });

  it('denies the call when the client declines the elicitation', async () => {
    writeFileSync(join(t.workdir, 'victim.txt'), 'x');
    model.push(scripted.toolCalls({ name: 'bash', arguments: { command: 'rm victim.txt' } }), scripted.text('left it'));
    const client = await connect({ elicit: () => ({ action: 'decline' }) });
    const result = (await client.callTool({ name: 'task', arguments: { prompt: 'remove victim.txt' } })) as CallToolResult;
    expect(textOf(result)).toBe('left it');
    expect(existsSync(join(t.workdir, 'victim.txt'))).toBe(true);
    expect(model.requests[1]?.messages.filter((message) => message.role === 'tool').at(-1)?.content).toBe('Denied by the user');
  });

  it('leaves the approval in the inbox for a client without elicitation; the call ends once it is approved there', async () => {
    writeFileSync(join(t.workdir, 'victim.txt'), 'x');
    model.push(scripted.toolCalls({ name: 'bash', arguments: { command: 'rm victim.txt' } }), scripted.text('removed it'));
    const client = await connect();
    const call = client.callTool({ name: 'task', arguments: { prompt: 'remove victim.txt' } });
    const pending = await until(() => getJson('/approvals?status=pending'), (list) => (list.approvals as Json[]).length > 0, 'a pending approval');
    const approval = (pending.approvals as Json[])[0]!;
    expect(approval).toMatchObject({ tool: 'bash', args: { command: 'rm victim.txt' } });
    expect(existsSync(join(t.workdir, 'victim.txt'))).toBe(true);
    const answer = await fetch(`${address}/approvals/${approval.id as string}`, { method: 'POST', headers: headers(), body: JSON.stringify({ decision: 'approve' }) });
    expect(answer.status).toBe(200);
    const result = (await call) as CallToolResult;
    expect(textOf(result)).toBe('removed it');
    expect(runOf(result)).toBe(approval.run_id);
    expect(existsSync(join(t.workdir, 'victim.txt'))).toBe(false);
  });

  it('cancels the run when the client cancels the call', async () => {
    writeFileSync(join(t.workdir, 'victim.txt'), 'x');
    model.push(scripted.toolCalls({ name: 'bash', arguments: { command: 'rm victim.txt' } }), scripted.text('removed it'));
    const client = await connect();
    const controller = new AbortController();
    const call = client.callTool({ name: 'task', arguments: { prompt: 'remove victim.txt' } }, undefined, { signal: controller.signal });
    const pending = await until(() => getJson('/approvals?status=pending'), (list) => (list.approvals as Json[]).length > 0, 'a pending approval');
    const runId = (pending.approvals as Json[])[0]!.run_id as string;
    controller.abort();
    await expect(call).rejects.toThrow();
    const run = await until(() => getJson(`/runs/${runId}`), (value) => ENDED.has(value.status as string), 'the run to end');
    expect(run).toMatchObject({ status: 'cancelled', error: 'Run cancelled' });
    expect(existsSync(join(t.workdir, 'victim.txt'))).toBe(true);
  });
  it('cancels the run when the client closes the connection of the call without a word', async () => {
    writeFileSync(join(t.workdir, 'victim.txt'), 'x');
    model.push(scripted.toolCalls({ name: 'bash', arguments: { command: 'rm victim.txt' } }), scripted.text('removed it'));
    const rpc = { ...headers(), accept: 'application/json, text/event-stream' };
    const init = await fetch(`${address}/mcp`, {
      method: 'POST',
      headers: rpc,
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } }),
    });
    expect(init.status).toBe(200);
    await init.text();
    const session = { ...rpc, 'mcp-session-id': init.headers.get('mcp-session-id')!, 'mcp-protocol-version': '2025-06-18' };
    const initialized = await fetch(`${address}/mcp`, { method: 'POST', headers: session, body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }) });
    expect(initialized.status).toBe(202);
    // A socket of its own, closed outright: no notifications/cancelled is sent.
    const call = request(`${address}/mcp`, { method: 'POST', headers: session });
    const answered = new Promise<IncomingMessage>((resolve) => call.once('response', resolve));
    call.on('error', () => undefined);
    call.end(JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'task', arguments: { prompt: 'remove victim.txt' } } }));
    expect((await answered).headers['content-type']).toContain('text/event-stream');
    const pending = await until(() => getJson('/approvals?status=pending'), (list) => (list.approvals as Json[]).length > 0, 'a pending approval');
    const runId = (pending.approvals as Json[])[0]!.run_id as string;
    call.destroy();
    const run = await until(() => getJson(`/runs/${runId}`), (value) => ENDED.has(value.status as string), 'the run to end');
    expect(run).toMatchObject({ status: 'cancelled', error: 'Run cancelled' });
    expect(existsSync(join(t.workdir, 'victim.txt'))).toBe(true);
  });
});
