import { scripted, startScriptedModel, type ScriptedModel } from '@mada/testkit';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../support/app.js';
import { DIALECTS } from '../support/databases.js';
import { quotaClient, type QuotaClient } from '../support/quota-client.js';

const ROOT = 'root-key-9e41c7a2d03b';

/*
 * Red-team corpus, tenants: bob, an ordinary user with his own key, tries to get more than his
 * quotas allow. Judged by what was stored and what the next submission gets, never by wording.
 */
describe.each(DIALECTS)('quota attacks on %s', (dialect) => {
  let model: ScriptedModel;
  let t: TestApp;
  let api: QuotaClient;

  beforeEach(async () => {
    model = await startScriptedModel();
    t = await createTestApp({ dialect, model: { url: model.url }, env: { API_KEYS: `root:${ROOT}`, ADMIN_USERS: 'root', RATE_LIMIT_PER_MINUTE: '0' } });
    api = quotaClient(await t.app.listen({ port: 0, host: '127.0.0.1' }), ROOT);
  });
  afterEach(async () => {
    await t.close();
    await model.close();
  });

  it('still counts the runs of a conversation the user deleted toward the daily run quota', async () => {
    const key = await api.user('bob', { max_runs_per_day: 2 });
    for (let round = 0; round < 2; round++) {
      const conversation = (await (await api.call(key, 'POST', '/conversations/', { agent_type: 'plan' })).json()) as { id: string };
      model.push(scripted.text('ok'));
      const turn = await api.call(key, 'POST', `/conversations/${conversation.id}/messages`, { content: 'spend one run' });
      expect(turn.status).toBe(200);
      const deleted = await fetch(`${api.address}/conversations/${conversation.id}`, { method: 'DELETE', headers: { 'x-api-key': key } });
      expect(deleted.status).toBe(204);
    }
    const usage = (await api.me(key)).usage;
    expect(usage.runs_today).toBe(2);
    // The tokens those runs used stay counted too (the token quota reads the same ledger).
    expect(usage.tokens_today).toBeGreaterThan(0);
    model.push(scripted.text('past the quota'));
    const refused = await api.startRun(key);
    expect([refused.status, await refused.json()]).toEqual([429, { detail: 'Daily run quota reached (2)' }]);
  });

  it('accepts exactly the quota when many submissions race', async () => {
    const key = await api.user('bob', { max_runs_per_day: 3 });
    for (let i = 0; i < 20; i++) model.push(scripted.text('ok'));
    const answers = await Promise.all(Array.from({ length: 20 }, () => api.startRun(key)));
    const statuses = answers.map((a) => a.status).sort();
    expect(statuses.filter((s) => s === 202)).toHaveLength(3);
    expect(statuses.filter((s) => s === 429)).toHaveLength(17);
    expect((await api.me(key)).usage.runs_today).toBe(3);
    const listed = (await (await api.call(key, 'GET', '/runs?limit=100')).json()) as { total: number };
    expect(listed.total).toBe(3);
  });
});
