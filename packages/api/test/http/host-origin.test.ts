import { afterEach, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../support/app.js';
import { send } from '../support/raw-http.js';

let t: TestApp | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

async function listening(env: Record<string, string> = {}): Promise<string> {
  t = await createTestApp({ env });
  return t.app.listen({ port: 0, host: '127.0.0.1' });
}

describe('local mode', () => {
  it('answers loopback Host names and addresses, with any port', async () => {
    const base = await listening();
    for (const host of ['localhost', 'localhost:8095', '127.0.0.1', '127.1.2.3:80', '[::1]', '[::1]:8095', 'LOCALHOST:1']) {
      expect((await send(base, { path: '/agents/', headers: { host } })).status, host).toBe(200);
    }
  });

  it('refuses any other Host with 403 Host not allowed (DNS rebinding), health included', async () => {
    const base = await listening();
    for (const host of ['attacker.example', 'attacker.example:8095', '127.0.0.1.attacker.example', '10.0.0.1', 'localhost.attacker.example', '[::2]']) {
      for (const path of ['/agents/', '/health', '/conversations/']) {
        const response = await send(base, { path, headers: { host } });
        expect([response.status, response.json()], `${host} ${path}`).toEqual([403, { detail: 'Host not allowed' }]);
      }
    }
  });

  it("refuses a request from another site's page with 403 Origin not allowed, before anything runs", async () => {
    const base = await listening();
    const response = await send(base, {
      method: 'POST',
      path: '/conversations/',
      headers: { origin: 'http://attacker.example' },
      body: { agent_type: 'task' },
    });
    expect([response.status, response.json()]).toEqual([403, { detail: 'Origin not allowed' }]);
    expect((await send(base, { path: '/conversations/' })).json()).toMatchObject({ total: 0 });
  });

  it("accepts the service's own origin (the /docs page) and the CORS_ORIGINS ones", async () => {
    const base = await listening({ CORS_ORIGINS: 'https://app.example' });
    const own = base.replace('http://', '');
    expect((await send(base, { path: '/agents/', headers: { origin: base } })).status).toBe(200);
    expect((await send(base, { path: '/agents/', headers: { origin: `http://${own}`, host: own } })).status).toBe(200);
    expect((await send(base, { path: '/agents/', headers: { origin: 'https://app.example' } })).status).toBe(200);
    expect((await send(base, { path: '/agents/', headers: { origin: 'http://localhost:1' } })).status).toBe(403);
    expect((await send(base, { path: '/agents/', headers: { origin: 'null' } })).status).toBe(403);
  });
});

describe('keyed mode', () => {
  const KEY = { 'x-api-key': 'alice-key-0123456789' };

  it('accepts any Host without ALLOWED_HOSTS, and takes no notice of Origin', async () => {
    const base = await listening({ API_KEYS: 'alice:alice-key-0123456789' });
    const response = await send(base, { path: '/agents/', headers: { ...KEY, host: 'mada.team.example', origin: 'http://elsewhere.example' } });
    expect(response.status).toBe(200);
  });

  it('applies ALLOWED_HOSTS to the Host header, with any port', async () => {
    const base = await listening({ API_KEYS: 'alice:alice-key-0123456789', ALLOWED_HOSTS: 'mada.team.example,10.0.0.5:8443' });
    expect((await send(base, { path: '/agents/', headers: { ...KEY, host: 'mada.team.example:8095' } })).status).toBe(200);
    expect((await send(base, { path: '/agents/', headers: { ...KEY, host: '10.0.0.5:8443' } })).status).toBe(200);
    const refused = await send(base, { path: '/agents/', headers: { ...KEY, host: 'other.example' } });
    expect([refused.status, refused.json()]).toEqual([403, { detail: 'Host not allowed' }]);
    expect((await send(base, { path: '/health', headers: { host: '127.0.0.1' } })).status).toBe(403);
  });
});
