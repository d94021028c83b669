import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_AUTH_FAILURES_PER_MINUTE } from '../../src/http/auth-failures.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { until } from '../support/until.js';
import { createTestDatabase } from '../support/databases.js';

/**
 * The browser console's sessions (TEAMS.md section 11) over real HTTP on loopback: a key traded
 * once for an HttpOnly cookie, accepted by every route as X-API-Key is, with the Origin rule for
 * changes, and ended by sign-out, by its lifetime and by the key's revocation.
 */

const ROOT_KEY = 'root-key-5b0e7c94d2a1';
type Json = Record<string, unknown>;

interface Answer {
  status: number;
  body: Json;
  headers: Headers;
}

interface Call {
  key?: string;
  cookie?: string;
  origin?: string;
  body?: Json;
  headers?: Record<string, string>;
}

async function call(address: string, method: string, path: string, options: Call = {}): Promise<Answer> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.key !== undefined) headers['x-api-key'] = options.key;
  if (options.cookie !== undefined) headers.cookie = options.cookie;
  if (options.origin !== undefined) headers.origin = options.origin;
  if (options.body !== undefined) headers['content-type'] = 'application/json';
  const response = await fetch(`${address}${path}`, { method, headers, redirect: 'manual', ...(options.body === undefined ? {} : { body: JSON.stringify(options.body) }) });
  const text = await response.text();
  const json = response.headers.get('content-type')?.includes('json') && text !== '' ? (JSON.parse(text) as Json) : {};
  return { status: response.status, body: json, headers: response.headers };
}

/** The `name=value` pair of the session cookie a response set, and its attributes. */
function sessionCookie(answer: Answer): { pair: string; attributes: string[] } {
  const line = answer.headers.getSetCookie().find((value) => value.startsWith('mada_session='));
  expect(line, 'a mada_session cookie').toBeDefined();
  const [pair, ...attributes] = line!.split(';').map((part) => part.trim());
  return { pair: pair!, attributes: attributes.map((a) => a.toLowerCase()) };
}

describe('console sessions', () => {
  let t: TestApp;
  let address: string;
  let own: string;
  const request = (method: string, path: string, options?: Call) => call(address, method, path, options);

  beforeAll(async () => {
    t = await createTestApp({ env: { API_KEYS: `root:${ROOT_KEY}`, ADMIN_USERS: 'root', RATE_LIMIT_PER_MINUTE: '0' } });
    address = await t.app.listen({ port: 0, host: '127.0.0.1' });
    own = address;
  });
  afterAll(async () => {
    await t?.close();
  });

  async function signIn(key: string, options: Call = {}): Promise<string> {
    const answer = await request('POST', '/session', { ...options, body: { key } });
    expect(answer.status).toBe(204);
    return sessionCookie(answer).pair;
  }

  /** A stored user with one key, made by root through the API: its key and the key's id. */
  async function storedUser(id: string): Promise<{ key: string; keyId: string }> {
    expect((await request('POST', '/users', { key: ROOT_KEY, body: { id } })).status).toBe(201);
    const created = await request('POST', `/users/${id}/keys`, { key: ROOT_KEY, body: { name: 'phone' } });
    expect(created.status).toBe(201);
    return { key: created.body.key as string, keyId: created.body.id as string };
  }

  it('trades a key for an HttpOnly, SameSite=Strict cookie that lasts CONSOLE_SESSION_HOURS and holds no key', async () => {
    const before = Date.now();
    const answer = await request('POST', '/session', { body: { key: ROOT_KEY }, origin: own });
    expect(answer.status).toBe(204);
    const { pair, attributes } = sessionCookie(answer);
    expect(attributes).toEqual(expect.arrayContaining(['httponly', 'samesite=strict', 'path=/']));
    // Plain HTTP from an http:// page: a Secure cookie would never come back.
    expect(attributes).not.toContain('secure');
    expect(pair).not.toContain(ROOT_KEY);
    expect(pair.slice('mada_session='.length)).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const expires = Date.parse(attributes.find((a) => a.startsWith('expires='))!.slice('expires='.length));
    expect(expires - before).toBeGreaterThan(12 * 3_600_000 - 5_000);
    expect(expires - before).toBeLessThan(12 * 3_600_000 + 5_000);

    const me = await request('GET', '/me', { cookie: pair });
    expect(me.status).toBe(200);
    expect(me.body.id).toBe('root');
  });

  it('marks the cookie Secure when the console page was loaded over HTTPS', async () => {
    const answer = await request('POST', '/session', { body: { key: ROOT_KEY }, origin: own.replace('http://', 'https://') });
    expect(answer.status).toBe(204);
    expect(sessionCookie(answer).attributes).toContain('secure');
  });

  it('refuses a wrong key with 401, and a sign-in from another site with 403', async () => {
    const wrong = await request('POST', '/session', { body: { key: 'not-a-key' } });
    expect(wrong.status).toBe(401);
    expect(wrong.body.detail).toBe('Invalid API key');
    expect(wrong.headers.getSetCookie()).toEqual([]);
    const foreign = await request('POST', '/session', { body: { key: ROOT_KEY }, origin: 'https://evil.example' });
    expect(foreign.status).toBe(403);
    expect(foreign.body.detail).toBe('Origin not allowed');
    expect(foreign.headers.getSetCookie()).toEqual([]);
    const empty = await request('POST', '/session', { body: { key: '' } });
    expect(empty.status).toBe(422);
  });

  it('lets a cookie change something only with the service\'s own Origin', async () => {
    const { key } = await storedUser('carol');
    const cookie = await signIn(key);
    const missing = await request('POST', '/me/keys', { cookie, body: { name: 'laptop' } });
    expect(missing.status).toBe(403);
    expect(missing.body.detail).toBe('Origin not allowed');
    const foreign = await request('POST', '/me/keys', { cookie, origin: 'http://attacker.example', body: { name: 'laptop' } });
    expect(foreign.status).toBe(403);
    expect(foreign.body.detail).toBe('Origin not allowed');
    const listed = await request('GET', '/me/keys', { cookie });
    expect((listed.body.keys as unknown[]).length).toBe(1);

    const made = await request('POST', '/me/keys', { cookie, origin: own, body: { name: 'laptop' } });
    expect(made.status).toBe(201);
    expect(((await request('GET', '/me/keys', { cookie })).body.keys as unknown[]).length).toBe(2);
    // X-API-Key is not sent by another site's page without CORS: no Origin needed beside it.
    const byKey = await request('POST', '/me/keys', { key, cookie, body: { name: 'desk' } });
    expect(byKey.status).toBe(201);
  });

  it('ends the session at sign-out', async () => {
    const cookie = await signIn(ROOT_KEY);
    const noOrigin = await request('DELETE', '/session', { cookie });
    expect(noOrigin.status).toBe(403);
    expect((await request('GET', '/me', { cookie })).status).toBe(200);

    const out = await request('DELETE', '/session', { cookie, origin: own });
    expect(out.status).toBe(204);
    const cleared = sessionCookie(out);
    expect(cleared.pair).toBe('mada_session=');
    const after = await request('GET', '/me', { cookie });
    expect(after.status).toBe(401);
    expect(after.body.detail).toBe('Session expired');
  });

  it('ends the session when its key is revoked', async () => {
    const { key, keyId } = await storedUser('dave');
    const cookie = await signIn(key);
    expect((await request('GET', '/me', { cookie })).body.id).toBe('dave');
    expect((await request('DELETE', `/users/dave/keys/${keyId}`, { key: ROOT_KEY })).status).toBe(204);
    // At once here; the key cache's half second at most on another replica (users/replicas.test.ts).
    const refused = await request('GET', '/me', { cookie });
    expect(refused.status).toBe(401);
    // Ended for good, in the database too: the key is not asked again.
    expect((await request('GET', '/me', { cookie })).body.detail).toBe('Session expired');
  });

  it('ends the session when its user is disabled', async () => {
    const { key } = await storedUser('erin');
    const cookie = await signIn(key);
    expect((await request('PATCH', '/users/erin', { key: ROOT_KEY, body: { disabled: true } })).status).toBe(200);
    expect((await request('GET', '/me', { cookie })).status).toBe(401);
    // Enabled again, the user signs in again: the session ended with the disabling.
    expect((await request('PATCH', '/users/erin', { key: ROOT_KEY, body: { disabled: false } })).status).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, 600));
    expect((await request('GET', '/me', { cookie })).body.detail).toBe('Session expired');
  });

  it('sends a browser asking for / to the console, and every other client the JSON', async () => {
    const browser = await request('GET', '/', { headers: { accept: 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8' } });
    expect(browser.status).toBe(302);
    expect(browser.headers.get('location')).toBe('/app/');
    for (const accept of [undefined, '*/*', 'application/json', 'application/json, text/html']) {
      const client = await request('GET', '/', accept === undefined ? {} : { headers: { accept } });
      expect(client.status, `Accept: ${accept}`).toBe(200);
      expect(client.body.name).toBe('mada-api');
    }
  });
});

describe('console session lifetime and limits', () => {
  it('keeps a session across a restart of the service on the same SQLite file, and stores no session id', async () => {
    const env = { API_KEYS: `root:${ROOT_KEY}` };
    const database = await createTestDatabase('sqlite');
    // The first service leaves the file in place when it stops; the second opens it anew.
    const first = await createTestApp({ env, database: { ...database, drop: async () => undefined } });
    let second: TestApp | undefined;
    try {
      const address = await first.app.listen({ port: 0, host: '127.0.0.1' });
      const { pair } = sessionCookie(await call(address, 'POST', '/session', { body: { key: ROOT_KEY } }));
      expect((await call(address, 'GET', '/me', { cookie: pair })).status).toBe(200);
      await first.close();

      second = await createTestApp({ env, shareDatabaseOf: first });
      const again = await second.app.listen({ port: 0, host: '127.0.0.1' });
      const me = await call(again, 'GET', '/me', { cookie: pair });
      expect(me.status).toBe(200);
      expect(me.body.id).toBe('root');
      // The file holds the id's digest only: the cookie's value is nowhere in it.
      const id = pair.slice('mada_session='.length);
      const file = database.url.slice('sqlite://'.length);
      for (const path of [file, `${file}-wal`]) if (existsSync(path)) expect(readFileSync(path).includes(Buffer.from(id)), path).toBe(false);
      expect((await call(again, 'DELETE', '/session', { cookie: pair, origin: again })).status).toBe(204);
      expect((await call(again, 'GET', '/me', { cookie: pair })).body.detail).toBe('Session expired');
    } finally {
      await second?.close();
      await database.drop();
    }
  });

  it('sweeps expired sessions from the database', async () => {
    const t = await createTestApp({ env: { API_KEYS: `root:${ROOT_KEY}`, CONSOLE_SESSION_HOURS: '0.0002' } });
    try {
      const address = await t.app.listen({ port: 0, host: '127.0.0.1' });
      for (let i = 0; i < 3; i++) expect((await call(address, 'POST', '/session', { body: { key: ROOT_KEY } })).status).toBe(204);
      await new Promise((resolve) => setTimeout(resolve, 800));
      expect(await t.sessions.sweep()).toBe(3);
      expect(await t.sessions.sweep()).toBe(0);
    } finally {
      await t.close();
    }
  });

  it('ends a session after CONSOLE_SESSION_HOURS', async () => {
    const t = await createTestApp({ env: { API_KEYS: `root:${ROOT_KEY}`, CONSOLE_SESSION_HOURS: '0.0004' } });
    try {
      const address = await t.app.listen({ port: 0, host: '127.0.0.1' });
      const signedIn = await call(address, 'POST', '/session', { body: { key: ROOT_KEY } });
      const { pair } = sessionCookie(signedIn);
      expect((await call(address, 'GET', '/me', { cookie: pair })).status).toBe(200);
      // 0.0004 hours: 1.44 s.
      const ended = await until(() => call(address, 'GET', '/me', { cookie: pair }), (answer) => answer.status === 401, 'the session to expire');
      expect(ended.body.detail).toBe('Session expired');
    } finally {
      await t.close();
    }
  });

  it('counts failed sign-ins with the failed-key limit', async () => {
    const t = await createTestApp({ env: { API_KEYS: `root:${ROOT_KEY}` } });
    try {
      const address = await t.app.listen({ port: 0, host: '127.0.0.1' });
      for (let i = 0; i < MAX_AUTH_FAILURES_PER_MINUTE; i++) expect((await call(address, 'POST', '/session', { body: { key: `guess-${i}` } })).status).toBe(401);
      const locked = await call(address, 'POST', '/session', { body: { key: ROOT_KEY } });
      expect(locked.status).toBe(429);
      // One limit for every credential: the header is refused too.
      expect((await call(address, 'GET', '/me', { key: `guess-x` })).status).toBe(429);
    } finally {
      await t.close();
    }
  });

  it('counts made-up session cookies with the failed-key limit, and clears a refused cookie', async () => {
    const t = await createTestApp({ env: { API_KEYS: `root:${ROOT_KEY}` } });
    try {
      const address = await t.app.listen({ port: 0, host: '127.0.0.1' });
      const first = await call(address, 'GET', '/me', { cookie: 'mada_session=made-up-0' });
      expect(first.status).toBe(401);
      expect(first.body.detail).toBe('Session expired');
      // The browser is told to drop it, so an ended session is sent once, not until the sign-in shows.
      expect(sessionCookie(first).pair).toBe('mada_session=');
      for (let i = 1; i < MAX_AUTH_FAILURES_PER_MINUTE; i++) expect((await call(address, 'GET', '/me', { cookie: `mada_session=made-up-${i}` })).status).toBe(401);
      // Each cookie costs a database read: past the limit they are refused before any is looked up.
      const locked = await call(address, 'GET', '/me', { cookie: 'mada_session=made-up-x' });
      expect(locked.status).toBe(429);
      expect((await call(address, 'GET', '/me', { key: ROOT_KEY })).status).toBe(429);
    } finally {
      await t.close();
    }
  });

  it('believes X-Forwarded-Proto about HTTPS only from a TRUST_PROXY peer', async () => {
    for (const [trusted, secure] of [[true, true], [false, false]] as const) {
      const t = await createTestApp({ env: { API_KEYS: `root:${ROOT_KEY}`, ...(trusted ? { TRUST_PROXY: '127.0.0.1' } : {}) } });
      try {
        const address = await t.app.listen({ port: 0, host: '127.0.0.1' });
        const answer = await call(address, 'POST', '/session', { body: { key: ROOT_KEY }, headers: { 'x-forwarded-proto': 'https' } });
        expect(answer.status).toBe(204);
        expect(sessionCookie(answer).attributes.includes('secure'), `trusted: ${trusted}`).toBe(secure);
      } finally {
        await t.close();
      }
    }
  });

  it('has no sign-in in local mode', async () => {
    const t = await createTestApp();
    try {
      const address = await t.app.listen({ port: 0, host: '127.0.0.1' });
      const answer = await call(address, 'POST', '/session', { body: { key: 'anything' } });
      expect(answer.status).toBe(409);
      expect(answer.body.detail).toBe('Local mode has no keys');
      expect((await call(address, 'GET', '/me')).body.id).toBe('local');
    } finally {
      await t.close();
    }
  });
});

describe('the console files at /app/', () => {
  let t: TestApp;
  let address: string;
  let dir: string;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'mada-console-'));
    mkdirSync(join(dir, 'assets'));
    writeFileSync(join(dir, 'index.html'), '<!doctype html><title>mada</title><script type="module" src="/app/assets/app.js"></script>');
    writeFileSync(join(dir, 'assets', 'app.js'), 'export {};');
    t = await createTestApp({ consoleDir: dir });
    address = await t.app.listen({ port: 0, host: '127.0.0.1' });
  });
  afterAll(async () => {
    await t?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('serves the app under a strict Content-Security-Policy', async () => {
    const page = await call(address, 'GET', '/app/');
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);
    const csp = page.headers.get('content-security-policy') ?? '';
    const directives = new Map(csp.split(';').map((d) => d.trim().split(/\s+/)).map(([name, ...values]) => [name, values.join(' ')]));
    expect(directives.get('script-src')).toBe("'self'");
    expect(directives.get('connect-src')).toBe("'self'");
    expect(directives.get('frame-ancestors')).toBe("'none'");
    expect(directives.get('default-src')).toBe("'none'");
    expect(csp).not.toContain('unsafe-inline');
    expect(csp).not.toContain('unsafe-eval');
    const script = await call(address, 'GET', '/app/assets/app.js');
    expect(script.status).toBe(200);
    expect(script.headers.get('content-type')).toMatch(/javascript/);
  });

  it('answers a page path of the app with the app, and a missing asset with 404', async () => {
    const deep = await fetch(`${address}/app/runs/0b0c`);
    expect(deep.status).toBe(200);
    expect(await deep.text()).toContain('<title>mada</title>');
    expect((await call(address, 'GET', '/app/assets/missing.js')).status).toBe(404);
    // Nothing outside the console's directory, however the path is spelled.
    for (const path of ['/app/assets/%2e%2e/%2e%2e/package.json', '/app/assets/..%2f..%2fpackage.json', '/app/assets/%2e%2e%2findex.html']) {
      const answer = await fetch(`${address}${path}`);
      expect([403, 404], path).toContain(answer.status);
    }
    const bare = await call(address, 'GET', '/app');
    expect(bare.status).toBe(302);
    expect(bare.headers.get('location')).toBe('/app/');
  });

  it('says how to build the console when it is not built', async () => {
    const unbuilt = await createTestApp({ consoleDir: join(dir, 'nothing-here') });
    try {
      const answer = await unbuilt.app.inject({ method: 'GET', url: '/app/', headers: { host: '127.0.0.1' } });
      expect(answer.statusCode).toBe(404);
      expect(answer.json()).toEqual({ detail: 'Console not built: run npm run build' });
    } finally {
      await unbuilt.close();
    }
  });
});
