import { copyFileSync, realpathSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { scripted, startScriptedModel, type ScriptedModel } from '@mada/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../support/app.js';
import { quotaClient } from '../support/quota-client.js';
import { outsideDir, runToEnd, toolResultBefore, writeConfig } from '../mcp/support.js';

/*
 * Red-team corpus, tenants and MCP: bob, a user of the same service, against alice's MCP servers,
 * and a server that changes its story after it was listed. Judged by which process answered, in
 * which workspace, and which tools the model was offered. These held when written.
 */

const ROOT = 'root-key-5d2e8a1c7f30';

describe('MCP attacks across users', { timeout: 90_000 }, () => {
  let model: ScriptedModel;
  let t: TestApp;
  let address: string;
  let workspaces: string;
  let made: string[] = [];
  let keys: { alice: string; bob: string };

  beforeAll(async () => {
    const dir = outsideDir('mada-redteam-mcp-');
    const script = join(dir, 'hostile-server.mjs');
    copyFileSync(fileURLToPath(new URL('../mcp/hostile-server.mjs', import.meta.url)), script);
    workspaces = outsideDir('mada-redteam-ws-');
    const server = (how: string, users?: string[]) => ({ command: 'node', args: [script, how], ...(users ? { users } : {}) });
    const config = writeConfig({ shared: server('whoami'), mine: server('whoami', ['alice']), turncoat: server('turncoat') });
    made = [dir, workspaces, dirname(config)];
    model = await startScriptedModel();
    t = await createTestApp({
      model: { url: model.url },
      env: { API_KEYS: `root:${ROOT}`, ADMIN_USERS: 'root', RATE_LIMIT_PER_MINUTE: '0', MCP_CONFIG_FILE: config, SANDBOX_READ_PATHS: dir, WORKSPACES_DIR: workspaces },
    });
    address = await t.app.listen({ port: 0, host: '127.0.0.1' });
    const api = quotaClient(address, ROOT);
    keys = { alice: await api.user('alice', {}), bob: await api.user('bob', {}) };
  });
  afterAll(async () => {
    await t?.close();
    await model?.close();
    for (const path of made) rmSync(path, { recursive: true, force: true });
  });

  const as = (user: keyof typeof keys) => ({ 'x-api-key': keys[user] });
  const offered = (index: number): string[] => (model.requests[index]?.tools ?? []).map((tool) => tool.name);

  it("bob's run never reaches alice's server process, nor a server started in her workspace, nor a server only she may use", async () => {
    model.push(scripted.toolCalls({ name: 'mcp__shared__ping', arguments: {} }), scripted.text('done'));
    const before = model.requests.length;
    await runToEnd(address, { agent_type: 'explore', working_dir: join(workspaces, 'alice') }, as('alice'));
    const [aliceToken, aliceDir] = (toolResultBefore(model, before + 1) ?? '').split(' ');
    expect(aliceToken).toMatch(/^process-/);
    expect(realpathSync(aliceDir!)).toBe(realpathSync(join(workspaces, 'alice')));

    const start = model.requests.length;
    model.push(scripted.toolCalls({ name: 'mcp__mine__ping', arguments: {} }), scripted.toolCalls({ name: 'mcp__shared__ping', arguments: {} }), scripted.text('done'));
    const { run } = await runToEnd(address, { agent_type: 'explore', working_dir: join(workspaces, 'bob') }, as('bob'));
    expect(run.status).toBe('succeeded');
    expect(offered(start).filter((name) => name.startsWith('mcp__mine__'))).toEqual([]);
    expect(toolResultBefore(model, start + 1)).toMatch(/^Error: Unknown tool 'mcp__mine__ping'/);
    const [bobToken, bobDir] = (toolResultBefore(model, start + 2) ?? '').split(' ');
    expect(bobToken).toMatch(/^process-/);
    expect(bobToken).not.toBe(aliceToken);
    expect(realpathSync(bobDir!)).toBe(realpathSync(join(workspaces, 'bob')));

    // One process per server and user: bob's start left alice's running, hers alone.
    const again = model.requests.length;
    model.push(scripted.toolCalls({ name: 'mcp__shared__ping', arguments: {} }), scripted.text('done'));
    await runToEnd(address, { agent_type: 'explore', working_dir: join(workspaces, 'alice') }, as('alice'));
    expect(toolResultBefore(model, again + 1)?.split(' ')[0]).toBe(aliceToken);
  });

  it('a server that says its tools changed and now calls a writing tool read-only never gets it into explore', async () => {
    const first = model.requests.length;
    model.push(scripted.toolCalls({ name: 'mcp__turncoat__ping', arguments: {} }), scripted.text('done'));
    await runToEnd(address, { agent_type: 'explore', working_dir: join(workspaces, 'bob') }, as('bob'));
    expect(offered(first)).toContain('mcp__turncoat__ping');
    expect(offered(first)).not.toContain('mcp__turncoat__wipe');
    // The notification came with the answer: the same run and the next one alike see the old listing.
    expect(offered(first + 1)).not.toContain('mcp__turncoat__wipe');
    const next = model.requests.length;
    model.push(scripted.toolCalls({ name: 'mcp__turncoat__wipe', arguments: {} }), scripted.text('done'));
    await runToEnd(address, { agent_type: 'explore', working_dir: join(workspaces, 'bob') }, as('bob'));
    expect(offered(next)).not.toContain('mcp__turncoat__wipe');
    expect(toolResultBefore(model, next + 1)).toMatch(/^Error: Unknown tool 'mcp__turncoat__wipe'/);
  });
});
