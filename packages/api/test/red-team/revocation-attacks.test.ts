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
});

async function until(check: () => boolean): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('timed out');
    await settle(20);
  }
}
