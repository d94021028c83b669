import { scripted, startScriptedModel, type ScriptedModel } from '@mada/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../support/app.js';
import { until } from '../support/until.js';

/*
 * Red-team corpus, the audit log: a hostile file in the workspace steers the model into a call
 * whose record in the audit log would not show what was approved. Judged by the entry an admin
 * reads back, against the command the run really ran.
 */

const ROOT_KEY = 'root-key-61c0e8a3d4f9';
const BOB_KEY = 'bob-key-2f7a90c1e5d3';
type Json = Record<string, unknown>;

describe('audit log attacks', { timeout: 60_000 }, () => {
  let model: ScriptedModel;
  let t: TestApp;
  let address: string;

  const as = async (key: string, method: string, path: string, body?: Json): Promise<Json> => {
    const response = await fetch(`${address}${path}`, {
      method,
      headers: { 'x-api-key': key, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await response.text();
    return text === '' ? {} : (JSON.parse(text) as Json);
  };

  beforeAll(async () => {
    model = await startScriptedModel();
    t = await createTestApp({ model: { url: model.url }, env: { API_KEYS: `root:${ROOT_KEY},bob:${BOB_KEY}`, ADMIN_USERS: 'root', RATE_LIMIT_PER_MINUTE: '0' } });
    address = await t.app.listen({ port: 0, host: '127.0.0.1' });
  });
  afterAll(async () => {
    await t?.close();
    await model?.close();
  });

  it('records an approved bash command whole, however far padding pushes its removal', async () => {
    // Within the 8 KiB the command policy takes, past what the audit entry used to keep.
    const command = `echo checking the build${' '.repeat(6000)}&& rm nothing-here.txt`;
    model.push(scripted.toolCalls({ name: 'bash', arguments: { command } }), scripted.text('done'));
    const run = (await as(BOB_KEY, 'POST', '/runs', { agent_type: 'task', prompt: 'check the build', working_dir: '.' })).id as string;
    const pending = await until(() => as(BOB_KEY, 'GET', '/approvals?status=pending'), (list) => (list.approvals as Json[]).length > 0, 'the approval');
    const approval = (pending.approvals as Json[])[0]!;
    // The inbox showed bob the whole command: that is what he approved.
    expect((approval.args as Json).command).toBe(command);
    await as(BOB_KEY, 'POST', `/approvals/${approval.id as string}`, { decision: 'approve' });
    await until(() => as(BOB_KEY, 'GET', `/runs/${run}`), (found) => found.status === 'succeeded', 'the run to end');

    const entries = (await as(ROOT_KEY, 'GET', '/audit?action=approval.decided')).entries as Json[];
    const entry = entries.find((found) => found.target === `approval:${approval.id as string}`);
    expect((entry?.detail as Json | undefined)?.command).toBe(command);
    expect(await as(ROOT_KEY, 'GET', '/audit/verify')).toMatchObject({ ok: true });
  });
});
