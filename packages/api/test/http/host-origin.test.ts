import { afterEach, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../support/app.js';
import { openSocket, parseRaw, readUntilClosed, send } from '../support/raw-http.js';

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
    const refused = ['attacker.example', 'attacker.example:8095', '127.0.0.1.attacker.example', '10.0.0.1', 'localhost.attacker.example', '[::2]'];
    // Spellings a resolver might take for loopback, which a rebinding page could try instead.
    const odd = ['127.1', '0x7f000001', '2130706433', '0177.0.0.1', '127.0.0.1.', 'localhost.', 'a@127.0.0.1', '127.0.0.1:80@attacker.example'];
    for (const host of [...refused, ...odd]) {
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
    for (const origin of [`${base}.attacker.example`, `${base}, http://attacker.example`, 'file://', `http://${own}@attacker.example`]) {
      expect((await send(base, { path: '/agents/', headers: { origin } })).status, origin).toBe(403);
    }
  });
});

describe('bodies a cross-site form or beacon can send without a preflight', () => {
  const RUN = '/runs/00000000-0000-4000-8000-000000000000';

  it.each(['text/plain', 'text/plain;charset=UTF-8', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x'])(
    'are refused with 415 before any route runs (%s)',
    async (type) => {
      const base = await listening();
      for (const [path, body] of [
        [`${RUN}/cancel`, ''],
        [`${RUN}/cancel`, 'x'],
        [`${RUN}/revert`, '{"force":true}'],
        ['/conversations/', '{"agent_type":"task"}'],
      ] as const) {
        const response = await send(base, { method: 'POST', path, headers: { 'content-type': type }, body });
        expect([response.status, response.json()], `${path} ${body}`).toEqual([415, { detail: 'Unsupported media type: send application/json' }]);
      }
      expect((await send(base, { path: '/conversations/' })).json()).toMatchObject({ total: 0 });
    },
  );

  it('leave a POST with no body and no Content-Type alone (cancel needs none)', async () => {
    const base = await listening();
    const response = await send(base, { method: 'POST', path: `${RUN}/cancel` });
    expect([response.status, response.json()]).toEqual([404, { detail: 'Run not found' }]);
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

describe('requests that name their host twice, or not at all', () => {
  async function raw(base: string, head: string, body = ''): Promise<{ status: number; body: unknown }> {
    const socket = await openSocket(base);
    const closed = readUntilClosed(socket);
    socket.write(`${head}Connection: close\r\n\r\n${body}`);
    return parseRaw(await closed);
  }

  it('answer 400 with a detail for an HTTP/1.1 request without Host, in either mode', async () => {
    for (const env of [{}, { API_KEYS: 'alice:alice-key-0123456789' }] as Record<string, string>[]) {
      const base = await listening(env);
      expect(await raw(base, 'GET /health HTTP/1.1\r\n')).toEqual({ status: 400, body: { detail: 'Missing Host header' } });
      await t?.close();
      t = undefined;
    }
  });

  it('answer 400 to two Host headers, whichever comes first (a proxy may read the other one)', async () => {
    const base = await listening({ API_KEYS: 'alice:alice-key-0123456789', ALLOWED_HOSTS: 'mada.team.example' });
    for (const [first, second] of [
      ['mada.team.example', 'attacker.example'],
      ['attacker.example', 'mada.team.example'],
    ]) {
      const response = await raw(base, `GET /health HTTP/1.1\r\nHost: ${first}\r\nHost: ${second}\r\n`);
      expect(response).toEqual({ status: 400, body: { detail: 'Multiple Host headers' } });
    }
  });

  it('refuse a second Origin header behind the service\'s own', async () => {
    const base = await listening();
    const own = base.replace('http://', '');
    const body = '{"agent_type":"task"}';
    for (const origins of [[base, 'http://attacker.example'], ['http://attacker.example', base]]) {
      const head = `POST /conversations/ HTTP/1.1\r\nHost: ${own}\r\n${origins.map((o) => `Origin: ${o}\r\n`).join('')}Content-Type: application/json\r\nContent-Length: ${body.length}\r\n`;
      expect(await raw(base, head, body)).toEqual({ status: 403, body: { detail: 'Origin not allowed' } });
    }
    expect((await send(base, { path: '/conversations/' })).json()).toMatchObject({ total: 0 });
  });

  it('check the host of an absolute-form target, which overrides the Host header', async () => {
    const base = await listening();
    const body = '{"agent_type":"task"}';
    const head = `POST http://attacker.example/conversations/ HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n`;
    const aimed = await raw(base, head, body);
    expect(aimed).toEqual({ status: 403, body: { detail: 'Host not allowed' } });
    expect((await raw(base, 'GET http://localhost:1/health HTTP/1.1\r\nHost: attacker.example\r\n')).status).toBe(200);
    expect((await send(base, { path: '/conversations/' })).json()).toMatchObject({ total: 0 });
  });
});

describe('framing by another site', () => {
  it('tells browsers never to show the docs page, the API or its errors in a frame', async () => {
    const base = await listening();
    for (const path of ['/docs/', '/docs/static/index.html', '/health', '/agents/', '/no-such-route']) {
      const response = await send(base, { path });
      expect(response.headers['content-security-policy'], path).toBe("frame-ancestors 'none'");
      expect(response.headers['x-frame-options'], path).toBe('DENY');
      expect(response.headers['x-content-type-options'], path).toBe('nosniff');
    }
    const refused = await send(base, { path: '/health', headers: { host: 'attacker.example' } });
    expect([refused.status, refused.headers['x-frame-options']]).toEqual([403, 'DENY']);
  });
});
