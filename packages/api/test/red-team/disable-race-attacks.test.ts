import { randomUUID } from 'node:crypto';
import { scripted, startScriptedModel, type ScriptedModel } from '@mada/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startReplicas, type Replicas } from '../support/app.js';
import { TEST_DATABASE_URL } from '../support/databases.js';
import { deferred } from '../support/quota-client.js';

/*
 * Red-team corpus, tenants: bob, about to be disabled, starts a run on the replica that has not
 * heard of it yet (its key cache trusts a lookup for up to half a second). Disabling a user cancels
 * their runs (TEAMS.md section 8): a run stored after the disable, which the cancelling missed,
 * must not run either. Judged by how the run ends and whether the model's answer reached it.
 */

const ROOT = 'root-key-4f7a2c9e1b83';
const SECRET = 'answered-after-the-disable';

describe.skipIf(!TEST_DATABASE_URL)('a run started on another replica as its user is disabled', () => {
  let model: ScriptedModel;
  let replicas: Replicas;

  beforeAll(async () => {
    model = await startScriptedModel();
    replicas = await startReplicas({ API_KEYS: `root:${ROOT}`, ADMIN_USERS: 'root', RATE_LIMIT_PER_MINUTE: '0', LLM_PROVIDER: 'ollama', LLM_BASE_URL: model.url });
  });
  afterAll(async () => {
    await replicas?.close();
    await model?.close();
  });

  const call = (address: string, key: string, method: string, path: string, body?: object): Promise<Response> =>
    fetch(`${address}${path}`, { method, headers: { 'x-api-key': key, 'content-type': 'application/json' }, ...(body ? { body: JSON.stringify(body) } : {}) });

  it('never runs: it ends cancelled, as the runs the disabling found', async () => {
    const { addressA, addressB } = replicas;
    // A name of its own each time: vitest's retry finds the last one's user stored.
    const bob = `bob-${randomUUID().slice(0, 8)}`;
    expect((await call(addressA, ROOT, 'POST', '/users', { id: bob })).status).toBe(201);
    const key = ((await (await call(addressA, ROOT, 'POST', `/users/${bob}/keys`, { name: 'k' })).json()) as { key: string }).key;
    const hold = deferred();
    model.push(scripted.chunks('busy ', scripted.until(hold.promise), SECRET));
    try {
      // B must still trust bob's key when his run arrives: a 401 there proves nothing, so try again.
      let runId: string | undefined;
      for (let attempt = 0; attempt < 5 && runId === undefined; attempt++) {
        expect((await call(addressB, key, 'GET', '/me')).status).toBe(200);
        expect((await call(addressA, ROOT, 'PATCH', `/users/${bob}`, { disabled: true })).status).toBe(200);
        const started = await call(addressB, key, 'POST', '/runs', { agent_type: 'plan', prompt: 'go' });
        if (started.status === 202) runId = ((await started.json()) as { id: string }).id;
        else {
          expect(started.status).toBe(401);
          expect((await call(addressA, ROOT, 'PATCH', `/users/${bob}`, { disabled: false })).status).toBe(200);
          await new Promise((resolve) => setTimeout(resolve, 600));
        }
      }
      expect(runId, 'replica B took the run').toBeDefined();
      // Past the cancelling on A, then the model would answer.
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      hold.resolve();
      const ended = await replicas.b.runs.finished(runId!);
      expect(ended.status).toBe('cancelled');
      expect(ended.response ?? '').not.toContain(SECRET);
    } finally {
      hold.resolve();
    }
  });
});
