import { scripted, startScriptedModel, type ScriptedModel } from '@mada/testkit';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../support/app.js';
import { deferred, quotaClient, type QuotaClient } from '../support/quota-client.js';

/*
 * Red-team corpus, tenants: a credential that stopped being valid (a revoked key, a signed-out
 * console session) must stop reading at once, the stream it already opened included. Judged by
 * what reaches the attacker's socket after the revocation.
 */

const ROOT = 'root-key-61f0b8e2c9d4';
const SECRET = 'written-after-the-revocation';

/** An open event stream: what it received so far, and whether the service closed it. */
function openStream(url: string, headers: Record<string, string>): { text: () => string; closed: Promise<void>; abort: () => void } {
  const controller = new AbortController();
  let received = '';
  const closed = (async () => {
    const response = await fetch(url, { headers, signal: controller.signal });
    expect(response.status).toBe(200);
    const decoder = new TextDecoder();
    for await (const piece of response.body as unknown as AsyncIterable<Uint8Array>) received += decoder.decode(piece, { stream: true });
  })().catch((error: unknown) => {
    if (!controller.signal.aborted) throw error;
  });
  return { text: () => received, closed, abort: () => controller.abort() };
}

const settle = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

describe('revoked credentials and open event streams', () => {
  let model: ScriptedModel;
  let t: TestApp;
  let api: QuotaClient;

  beforeEach(async () => {
    model = await startScriptedModel();
    t = await createTestApp({ model: { url: model.url }, env: { API_KEYS: `root:${ROOT}`, ADMIN_USERS: 'root', RATE_LIMIT_PER_MINUTE: '0' } });
    api = quotaClient(await t.app.listen({ port: 0, host: '127.0.0.1' }), ROOT);
  });
  afterEach(async () => {
    await t.close();
    await model.close();
  });

  /** Bob's run, held mid-answer: its events stream until `release` lets it write SECRET. */
  async function heldRun(key: string): Promise<{ id: string; release: () => void }> {
    const hold = deferred();
    model.push(scripted.chunks('busy ', scripted.until(hold.promise), SECRET));
    const id = await api.runId(await api.startRun(key));
    return { id, release: hold.resolve };
  }

  /**
   * Bob's held run streamed with `headers`; `revoke` ends the credential mid-run; then, past the
   * spec's second and the check's interval, the run writes SECRET, which must not reach bob.
   */
  async function streamPastRevocation(key: string, headers: Record<string, string>, revoke: () => Promise<Response>): Promise<void> {
    const run = await heldRun(key);
    const stream = openStream(`${api.address}/runs/${run.id}/events`, headers);
    try {
      await until(() => stream.text().includes('busy'));
      expect((await revoke()).status).toBe(204);
      await settle(2_500);
      run.release();
      await Promise.race([stream.closed, settle(2_000)]);
      expect(stream.text()).not.toContain(SECRET);
    } finally {
      stream.abort();
      run.release();
    }
  }

  it('closes a stream opened with X-API-Key once the key is revoked', async () => {
    const key = await api.user('bob', {});
    const keys = (await (await api.call(key, 'GET', '/me/keys')).json()) as { keys: { id: string }[] };
    await streamPastRevocation(key, { 'x-api-key': key }, () => fetch(`${api.address}/users/bob/keys/${keys.keys[0]!.id}`, { method: 'DELETE', headers: { 'x-api-key': ROOT } }));
  });

  it('closes a stream opened with a console session once the session is signed out', async () => {
    const key = await api.user('bob', {});
    const signIn = await fetch(`${api.address}/session`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ key }) });
    expect(signIn.status).toBe(204);
    const cookie = signIn.headers.getSetCookie()[0]!.split(';')[0]!;
    await streamPastRevocation(key, { cookie }, () => fetch(`${api.address}/session`, { method: 'DELETE', headers: { cookie, origin: api.address } }));
  });

  /**
   * A blocking request (`POST /agents/run`, `POST /conversations/{id}/messages`) holds its run's
   * answer until the run ends: the credential it came with is revoked mid-run, then the run writes
   * SECRET, which must not reach bob in the answer.
   */
  async function blockingPastRevocation(path: string, body: unknown, headers: Record<string, string>, revoke: () => Promise<Response>): Promise<void> {
    const hold = deferred();
    const asked = model.requests.length;
    model.push(scripted.chunks('busy ', scripted.until(hold.promise), SECRET));
    try {
      const answer = fetch(`${api.address}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
      await until(() => model.requests.length > asked);
      expect((await revoke()).status).toBe(204);
      await settle(2_500);
      hold.resolve();
      const response = await answer;
      const text = await response.text();
      expect(text).not.toContain(SECRET);
      expect({ status: response.status, text }).toEqual({ status: 401, text: JSON.stringify({ detail: 'Invalid API key' }) });
      // The run stopped with the answer, as when its client goes away: nobody is left to hear it.
      expect((await t.runs.finished(response.headers.get('x-run-id')!)).status).toBe('cancelled');
    } finally {
      hold.resolve();
    }
  }

  it('answers a blocking agent run 401, without its text, once the key it came with is revoked', async () => {
    const key = await api.user('bob', {});
    const keys = (await (await api.call(key, 'GET', '/me/keys')).json()) as { keys: { id: string }[] };
    await blockingPastRevocation('/agents/run', { agent_type: 'plan', prompt: 'go' }, { 'x-api-key': key }, () =>
      fetch(`${api.address}/users/bob/keys/${keys.keys[0]!.id}`, { method: 'DELETE', headers: { 'x-api-key': ROOT } }),
    );
  });

  it('answers a blocking conversation turn 401, without its text, once the console session it came with is signed out', async () => {
    const key = await api.user('bob', {});
    const conversation = (await (await api.call(key, 'POST', '/conversations/', { agent_type: 'plan' })).json()) as { id: string };
    const signIn = await fetch(`${api.address}/session`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ key }) });
    const cookie = signIn.headers.getSetCookie()[0]!.split(';')[0]!;
    await blockingPastRevocation(`/conversations/${conversation.id}/messages`, { content: 'go' }, { cookie, origin: api.address }, () =>
      fetch(`${api.address}/session`, { method: 'DELETE', headers: { cookie, origin: api.address } }),
    );
  });
});

async function until(check: () => boolean): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('timed out');
    await settle(20);
  }
}
