import { copyFileSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { scripted, startScriptedModel, type ScriptedModel } from '@mada/testkit';
import { afterEach, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../support/app.js';
import { DIALECTS } from '../support/databases.js';
import { until } from '../support/until.js';
import { outsideDir, runToEnd, toolResultBefore, writeConfig, type Json } from './support.js';

const KEY = 'ann-key-0123456789';
const HEADERS = { 'x-api-key': KEY };
const CANNOT_WAIT = 'Needs approval, and this run cannot wait for it (on_ask=deny)';

/**
 * approve_always on an MCP tool that asks (its server does not mark it read-only) stores a grant
 * for that tool by name, for the user in the run's working directory, as for any other tool: the
 * same tool no longer asks there, another tool of the same server still does.
 */
describe.each(DIALECTS)('approve_always for an MCP tool on %s', { timeout: 60_000 }, (dialect) => {
  let model: ScriptedModel;
  let t: TestApp;
  let address: string;

  afterEach(async () => {
    await t?.close();
    await model?.close();
  });

  it('stops asking for that tool in that working directory, and only for that tool', async () => {
    const dir = outsideDir('mada-mcp-always-');
    const script = join(dir, 'hostile-server.mjs');
    copyFileSync(fileURLToPath(new URL('./hostile-server.mjs', import.meta.url)), script);
    model = await startScriptedModel();
    const config = writeConfig({ w: { command: 'node', args: [script, 'writer'] } });
    t = await createTestApp({ dialect, model: { url: model.url }, env: { API_KEYS: `ann:${KEY}`, MCP_CONFIG_FILE: config, SANDBOX_READ_PATHS: dir, RATE_LIMIT_PER_MINUTE: '0' } });
    address = await t.app.listen({ port: 0, host: '127.0.0.1' });
    mkdirSync(join(t.workdir, 'a'));
    mkdirSync(join(t.workdir, 'b'));
    writeFileSync(join(t.workdir, 'a', 'keep.txt'), 'x');

    // The first call asks; the user answers approve_always.
    model.push(scripted.toolCalls({ name: 'mcp__w__wipe', arguments: {} }), scripted.text('done'));
    const answering = (async () => {
      const list = await until(
        async () => (await (await fetch(`${address}/approvals?status=pending`, { headers: HEADERS })).json()) as { approvals: Json[] },
        (found) => found.approvals.length > 0,
        'the approval',
      );
      const approval = list.approvals[0]!;
      expect(approval.tool).toBe('mcp__w__wipe');
      const response = await fetch(`${address}/approvals/${approval.id as string}`, {
        method: 'POST',
        headers: { ...HEADERS, 'content-type': 'application/json' },
        body: JSON.stringify({ decision: 'approve_always' }),
      });
      expect(response.status).toBe(200);
    })();
    const first = await runToEnd(address, { working_dir: 'a' }, HEADERS);
    await answering;
    expect(first.run.status).toBe('succeeded');
    expect(toolResultBefore(model, 1)).toBe('pong');

    // A later run that cannot wait for an answer: the granted tool runs, the other tool of the server asks.
    model.push(scripted.toolCalls({ name: 'mcp__w__wipe', arguments: { anything: 'else' } }), scripted.toolCalls({ name: 'mcp__w__stamp', arguments: {} }), scripted.text('done'));
    const second = await runToEnd(address, { working_dir: 'a', on_ask: 'deny' }, HEADERS);
    expect(second.run.status).toBe('succeeded');
    expect(toolResultBefore(model, 3)).toBe('pong');
    expect(toolResultBefore(model, 4)).toBe(CANNOT_WAIT);

    // Another working directory: the grant is not there (as approve_always grants of every tool).
    model.push(scripted.toolCalls({ name: 'mcp__w__wipe', arguments: {} }), scripted.text('done'));
    const elsewhere = await runToEnd(address, { working_dir: 'b', on_ask: 'deny' }, HEADERS);
    expect(elsewhere.run.status).toBe('succeeded');
    expect(toolResultBefore(model, 6)).toBe(CANNOT_WAIT);
    const approvals = (await (await fetch(`${address}/approvals`, { headers: HEADERS })).json()) as { total: number };
    expect(approvals.total).toBe(1);
  });
});
