import { connect, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { canActAsAnotherAccount, nextLine, pythonAsAnotherAccount } from '../support/another-account.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { openSocket, parseRaw, readUntilClosed, send } from '../support/raw-http.js';

let t: TestApp | undefined;
const sockets: Socket[] = [];
afterEach(async () => {
  for (const socket of sockets.splice(0)) socket.destroy();
  await t?.close();
  t = undefined;
});

async function listening(env: Record<string, string> = {}): Promise<string> {
  t = await createTestApp({ env });
  return t.app.listen({ port: 0, host: '127.0.0.1' });
}

async function socketTo(base: string): Promise<Socket> {
  const socket = await openSocket(base);
  sockets.push(socket);
  return socket;
}

describe('slow and idle connections', () => {
  it('answers 408 with a detail and closes a request whose body never finishes arriving', async () => {
    const base = await listening({ REQUEST_TIMEOUT_SECONDS: '1' });
    const socket = await socketTo(base);
    const closed = readUntilClosed(socket);
    socket.write('POST /agents/run HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"agent');
    const { status, body } = parseRaw(await closed);
    expect(status).toBe(408);
    expect(body).toEqual({ detail: 'Request timed out: it did not arrive whole in time' });
  });

  it('closes a connection whose headers never finish', async () => {
    const base = await listening({ REQUEST_TIMEOUT_SECONDS: '1' });
    const socket = await socketTo(base);
    const closed = readUntilClosed(socket);
    socket.write('GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ');
    expect(parseRaw(await closed).status).toBe(408);
  });

  it('closes an idle keep-alive connection after KEEP_ALIVE_TIMEOUT_SECONDS', async () => {
    const base = await listening({ KEEP_ALIVE_TIMEOUT_SECONDS: '0.5' });
    const socket = await socketTo(base);
    const closed = readUntilClosed(socket);
    socket.write('GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
    const text = await closed;
    expect(parseRaw(text).status).toBe(200);
    expect(text).toMatch(/keep-alive/i);
  });
});

describe('open connection limits', () => {
  it.each([
    ['per address', { MAX_CONNECTIONS_PER_ADDRESS: '3' }, 429, 'Too many open connections from this address (max 3)'],
    ['in all, over every address', { MAX_CONNECTIONS: '3', MAX_CONNECTIONS_PER_ADDRESS: '100' }, 503, 'Too many open connections (max 3)'],
  ] as const)('refuses connections past the limit %s and accepts new ones once others close', async (_limit, env, status, detail) => {
    const base = await listening(env);
    const held = [await socketTo(base), await socketTo(base), await socketTo(base)];
    const extra = await socketTo(base);
    const refused = parseRaw(await readUntilClosed(extra));
    expect(refused).toEqual({ status, body: { detail } });
    held[0]!.destroy();
    await expect.poll(async () => (await send(base, { path: '/' }).catch(() => ({ status: 0 }))).status).toBe(200);
  });
});

/** A connection from `localAddress`: a local user may pick any source address in 127.0.0.0/8. */
async function socketFrom(base: string, localAddress: string): Promise<Socket> {
  const url = new URL(base);
  const socket = connect({ port: Number(url.port), host: url.hostname, localAddress });
  sockets.push(socket);
  await new Promise((resolve, reject) => socket.once('connect', resolve).once('error', reject));
  return socket;
}

describe('connections from loopback', () => {
  it('count as one address whichever 127.0.0.0/8 source address they come from', async () => {
    const base = await listening({ MAX_CONNECTIONS_PER_ADDRESS: '3' });
    for (const address of ['127.0.0.1', '127.0.0.2', '127.9.9.9']) await socketFrom(base, address);
    const extra = await socketFrom(base, '127.200.0.1');
    const refused = parseRaw(await readUntilClosed(extra));
    expect(refused).toEqual({ status: 429, body: { detail: 'Too many open connections from this address (max 3)' } });
  });

  /**
   * As another local account (nobody), opens `count` connections and leaves them idle, then one
   * more: its status line's code (empty when it got none) is the program's first line. The
   * connections stay open until the program's input is closed.
   */
  const holdAsAnotherAccount = (base: string, count: number): { refused: Promise<string>; release(): void } => {
    const { hostname, port } = new URL(base);
    const child = pythonAsAnotherAccount(
      [
        'import socket, sys',
        `held = [socket.create_connection((${JSON.stringify(hostname)}, ${port})) for _ in range(${count})]`,
        `extra = socket.create_connection((${JSON.stringify(hostname)}, ${port}))`,
        'extra.settimeout(10)',
        'data = b""',
        'while True:',
        '    chunk = extra.recv(4096)',
        '    if not chunk: break',
        '    data += chunk',
        'print(data.split(b" ")[1].decode() if data.startswith(b"HTTP/") else "", flush=True)',
        'sys.stdin.read()',
      ].join('\n'),
    );
    return { refused: nextLine(child), release: () => child.stdin!.end() };
  };

  it.runIf(canActAsAnotherAccount)("count per local account: another account's idle connections do not lock this one out (needs root)", async () => {
    const base = await listening();
    const limit = t!.settings.maxConnectionsPerAddress;
    const other = holdAsAnotherAccount(base, limit);
    try {
      // The other account is held to the limit...
      expect(await other.refused).toBe('429');
      // ...and this one, on the same loopback address, still gets in, more than once at a time.
      const mine = [await socketTo(base), await socketTo(base)];
      expect((await send(base, { path: '/' })).status).toBe(200);
      for (const socket of mine) socket.destroy();
    } finally {
      other.release();
    }
  });
});

describe('connections from loopback, while another account floods them', () => {
  it.runIf(canActAsAnotherAccount)('let this account in while a flood arrives faster than the socket tables are read, and close the flood (needs root)', async () => {
    const base = await listening({ MAX_CONNECTIONS_PER_ADDRESS: '32' });
    const { hostname, port } = new URL(base);
    // Connections over the limit faster than the tables are read (once every 50 ms): one that
    // came before the next reading used to be refused with the flood's, whoever opened it.
    const other = pythonAsAnotherAccount(
      [
        'import socket, sys',
        `address = (${JSON.stringify(hostname)}, ${port})`,
        'held = [socket.create_connection(address) for _ in range(32)]',
        'extra = [socket.create_connection(address) for _ in range(30)]',
        'print("flooded", flush=True)',
        'sys.stdin.readline()',
        'closed = 0',
        'for s in extra:',
        '    s.settimeout(5)',
        '    try:',
        '        while s.recv(4096): pass',
        '        closed += 1',
        '    except OSError:',
        '        closed += 1',
        'print(closed, flush=True)',
        'sys.stdin.read()',
      ].join('\n'),
    );
    try {
      expect(await nextLine(other)).toBe('flooded');
      expect((await send(base, { path: '/' })).status).toBe(200);
      const counted = nextLine(other);
      other.stdin!.write('count\n');
      // Every connection past the other account's limit is refused or, judged later, closed.
      expect(await counted).toBe('30');
    } finally {
      other.stdin!.end();
    }
  });
});

describe('connections from a trusted proxy (TRUST_PROXY)', () => {
  it('count only toward MAX_CONNECTIONS: they carry many clients', async () => {
    const base = await listening({ TRUST_PROXY: '127.0.0.1', MAX_CONNECTIONS_PER_ADDRESS: '3', MAX_CONNECTIONS: '6' });
    for (let i = 0; i < 5; i++) await socketTo(base);
    expect((await send(base, { path: '/' })).status).toBe(200);
    await socketTo(base);
    const extra = await socketTo(base);
    expect(parseRaw(await readUntilClosed(extra))).toEqual({ status: 503, body: { detail: 'Too many open connections (max 6)' } });
  });

  it('leave every other address under MAX_CONNECTIONS_PER_ADDRESS', async () => {
    const base = await listening({ TRUST_PROXY: '127.0.0.2, 10.0.0.0/8', MAX_CONNECTIONS_PER_ADDRESS: '3' });
    for (let i = 0; i < 3; i++) await socketFrom(base, '127.0.0.1');
    const extra = await socketFrom(base, '127.0.0.1');
    expect(parseRaw(await readUntilClosed(extra)).status).toBe(429);
  });
});

describe('failed authentication', () => {
  it('counts failures from every loopback source address together', async () => {
    const base = await listening({ API_KEYS: 'alice:alice-key-0123456789', RATE_LIMIT_PER_MINUTE: '0' });
    const ask = async (localAddress: string, key: string): Promise<number> => {
      const socket = await socketFrom(base, localAddress);
      const closed = readUntilClosed(socket);
      socket.write(`GET /agents/ HTTP/1.1\r\nHost: 127.0.0.1\r\nX-API-Key: ${key}\r\nConnection: close\r\n\r\n`);
      return parseRaw(await closed).status;
    };
    for (let i = 0; i < 30; i++) expect(await ask(`127.0.${i}.1`, `guess-${i}`)).toBe(401);
    expect(await ask('127.0.99.1', 'alice-key-0123456789')).toBe(429);
  });


  it('answers 429 with Retry-After after 30 failures a minute from one address, even for a good key', async () => {
    const base = await listening({ API_KEYS: 'alice:alice-key-0123456789', RATE_LIMIT_PER_MINUTE: '0' });
    for (let i = 0; i < 30; i++) {
      const response = await send(base, { path: '/agents/', headers: { 'x-api-key': `guess-${i}` } });
      expect(response.status).toBe(401);
    }
    const limited = await send(base, { path: '/agents/', headers: { 'x-api-key': 'alice-key-0123456789' } });
    expect(limited.status).toBe(429);
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
    expect(limited.json()).toEqual({ detail: expect.stringMatching(/^Too many failed authentication attempts\. Retry in \d+ seconds\.$/) });
    expect((await send(base, { path: '/health' })).status).toBe(200);
  });

  it('counts by the connecting address, whatever X-Forwarded-For or X-Real-IP claim', async () => {
    const base = await listening({ API_KEYS: 'alice:alice-key-0123456789', RATE_LIMIT_PER_MINUTE: '0' });
    for (let i = 0; i < 30; i++) {
      const spoofed = { 'x-api-key': `guess-${i}`, 'x-forwarded-for': `203.0.113.${i}`, 'x-real-ip': `198.51.100.${i}`, forwarded: `for=192.0.2.${i}` };
      expect((await send(base, { path: '/agents/', headers: spoofed })).status).toBe(401);
    }
    const fresh = { 'x-api-key': 'alice-key-0123456789', 'x-forwarded-for': '203.0.113.200' };
    expect((await send(base, { path: '/agents/', headers: fresh })).status).toBe(429);
  });

  it('does not count successful requests', async () => {
    const base = await listening({ API_KEYS: 'alice:alice-key-0123456789', RATE_LIMIT_PER_MINUTE: '0' });
    for (let i = 0; i < 40; i++) expect((await send(base, { path: '/agents/', headers: { 'x-api-key': 'alice-key-0123456789' } })).status).toBe(200);
  });
});

describe("the HTTP server's own errors", () => {
  const raw = async (base: string, request: string) => {
    const socket = await socketTo(base);
    const closed = readUntilClosed(socket);
    socket.write(request);
    return parseRaw(await closed);
  };

  it('answers bad percent-encoding with 400 and a detail', async () => {
    const base = await listening();
    const response = await send(base, { path: '/conversations/%E0%A4%A' });
    expect([response.status, response.json()]).toEqual([400, { detail: 'Malformed URL: bad percent-encoding' }]);
  });

  it('answers a request line over 16 KiB with 414', async () => {
    const base = await listening();
    const response = await raw(base, `GET /conversations/${'a'.repeat(17_000)} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`);
    expect(response).toEqual({ status: 414, body: { detail: 'Request line is too long' } });
  });

  it('answers headers over the limit with 431', async () => {
    const base = await listening();
    const response = await raw(base, `GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: ${'b'.repeat(17_000)}\r\n\r\n`);
    expect(response).toEqual({ status: 431, body: { detail: 'Request headers are too large' } });
  });

  it('answers CONNECT with 405 and a detail instead of dropping the connection', async () => {
    const base = await listening();
    const response = await raw(base, 'CONNECT attacker.example:443 HTTP/1.1\r\nHost: attacker.example:443\r\n\r\n');
    expect(response).toEqual({ status: 405, body: { detail: 'Method not allowed: this service is not a proxy' } });
  });

  it('answers a request it cannot parse with 400 and a detail', async () => {
    const base = await listening();
    expect(await raw(base, 'NONSENSE\r\n\r\n')).toEqual({ status: 400, body: { detail: 'Malformed HTTP request' } });
  });

  it('lets a long id reach the route (404), not the router', async () => {
    const base = await listening();
    const response = await send(base, { path: `/conversations/${'a'.repeat(500)}` });
    expect([response.status, response.json()]).toEqual([404, { detail: 'Conversation not found' }]);
  });
});
