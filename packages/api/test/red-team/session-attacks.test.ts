import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../support/app.js';
import { send } from '../support/raw-http.js';

/*
 * Red-team corpus, tenants: bob, a user of the same service with his own key, against the web
 * console's sessions and files. Each attack is judged by its side effect (a key made, a session
 * taken over, a file's bytes served), not by the wording of a refusal. These held when written;
 * they stay so that they keep holding.
 */

const ROOT = 'root-key-2c7d94e1a0b5';
const OUTSIDE = 'outside-the-console-3f1a';

describe('console session attacks', () => {
  let t: TestApp;
  let address: string;
  let dir: string;
  let bob: string;

  beforeAll(async () => {
    const root = mkdtempSync(join(tmpdir(), 'mada-redteam-'));
    dir = join(root, 'dist');
    mkdirSync(join(dir, 'assets'), { recursive: true });
    writeFileSync(join(dir, 'index.html'), '<!doctype html><title>mada</title>');
    writeFileSync(join(dir, 'assets', 'app.js'), 'export {};');
    writeFileSync(join(root, 'secret.txt'), OUTSIDE);
    symlinkSync(join(root, 'secret.txt'), join(dir, 'assets', 'linked.js'));
    symlinkSync(root, join(dir, 'assets', 'up'));
    t = await createTestApp({ consoleDir: dir, env: { API_KEYS: `root:${ROOT}`, ADMIN_USERS: 'root', RATE_LIMIT_PER_MINUTE: '0' } });
    address = await t.app.listen({ port: 0, host: '127.0.0.1' });
    expect((await send(address, { method: 'POST', path: '/users', headers: { 'x-api-key': ROOT }, body: { id: 'bob' } })).status).toBe(201);
    bob = ((await send(address, { method: 'POST', path: '/users/bob/keys', headers: { 'x-api-key': ROOT }, body: { name: 'laptop' } })).json() as { key: string }).key;
  });
  afterAll(async () => {
    await t?.close();
    rmSync(join(dir, '..'), { recursive: true, force: true });
  });

  const host = (): string => new URL(address).host;

  async function signIn(cookie?: string): Promise<string> {
    const answer = await send(address, { method: 'POST', path: '/session', headers: cookie === undefined ? {} : { cookie }, body: { key: bob } });
    expect(answer.status).toBe(204);
    const line = ([] as string[]).concat(answer.headers['set-cookie'] ?? []).find((l) => l.startsWith('mada_session='));
    return line!.split(';')[0]!;
  }

  const keyCount = async (cookie: string): Promise<number> => ((await send(address, { path: '/me/keys', headers: { cookie } })).json() as { keys: unknown[] }).keys.length;

  it('session fixation: a cookie the attacker planted before sign-in is never the one signed in', async () => {
    const planted = 'mada_session=attacker-chosen-value-0123456789abcdef';
    const issued = await signIn(planted);
    expect(issued).not.toBe(planted);
    expect((await send(address, { path: '/me', headers: { cookie: planted } })).status).toBe(401);
    expect((await send(address, { path: '/me', headers: { cookie: issued } })).status).toBe(200);
  });

  it('CSRF: no cookie-authenticated write without exactly the own Origin', async () => {
    const cookie = await signIn();
    const before = await keyCount(cookie);
    const port = Number(new URL(address).port);
    const origins = [undefined, 'null', `http://127.0.0.1:${port + 1}`, `http://localhost:${port}`, 'http://127.0.0.1', `http://127.0.0.1:${port}.attacker.example`, `http://attacker.example/${host()}`, `http://${host()}@attacker.example`];
    for (const origin of origins) {
      const answer = await send(address, { method: 'POST', path: '/me/keys', headers: { cookie, ...(origin === undefined ? {} : { origin }) }, body: { name: 'csrf' } });
      expect(answer.status, String(origin)).toBe(403);
    }
    // A form or sendBeacon body (no preflight) is refused before any route runs.
    const form = await send(address, { method: 'POST', path: '/me/keys', headers: { cookie, origin: address, 'content-type': 'text/plain' }, body: '{"name":"csrf"}' });
    expect(form.status).toBe(415);
    // Sign-out is a write too: a foreign page cannot end bob's session (nor can a GET).
    expect((await send(address, { method: 'DELETE', path: '/session', headers: { cookie, origin: 'null' } })).status).toBe(403);
    expect((await send(address, { method: 'GET', path: '/session', headers: { cookie } })).status).toBe(404);
    expect((await send(address, { path: '/me', headers: { cookie } })).status).toBe(200);
    expect(await keyCount(cookie)).toBe(before);
  });

  it('login CSRF: another page cannot sign the browser in as the attacker', async () => {
    for (const origin of ['null', 'http://attacker.example']) {
      const answer = await send(address, { method: 'POST', path: '/session', headers: { origin }, body: { key: bob } });
      expect(answer.status, origin).toBe(403);
      expect(answer.headers['set-cookie']).toBeUndefined();
    }
  });

  it('path traversal in /app/: no byte from outside the console directory, however spelled', async () => {
    const paths = [
      '/app/assets/../../secret.txt',
      '/app/assets/%2e%2e/%2e%2e/secret.txt',
      '/app/assets/%252e%252e/%252e%252e/secret.txt',
      '/app/assets/..%2f..%2fsecret.txt',
      '/app/assets/..%5c..%5csecret.txt',
      '/app/assets/%c0%ae%c0%ae/%c0%ae%c0%ae/secret.txt',
      '/app/assets/linked.js',
      '/app/assets/up/secret.txt',
      '/app/assets/./../../secret.txt',
      '/app/assets%2f..%2f..%2fsecret.txt',
    ];
    for (const path of paths) {
      const answer = await send(address, { path });
      expect(answer.text, path).not.toContain(OUTSIDE);
      expect(answer.status, path).not.toBe(500);
    }
  });

  it("every /app/ answer, errors and the router's own included, loads nothing from elsewhere and is never sniffed", async () => {
    const answers = [
      ['GET', '/app/'],
      ['GET', '/app/runs/not-a-file'],
      ['GET', '/app/assets/app.js'],
      ['GET', '/app/assets/missing.js'],
      ['GET', '/app/assets/%2e%2e/x'],
      ['HEAD', '/app/'],
      ['GET', '/app/%ZZ<script>'],
      ['GET', '/app/assets/%E0%A4%A'],
    ] as const;
    for (const [method, path] of answers) {
      const answer = await send(address, { method, path });
      const policy = String(answer.headers['content-security-policy']);
      expect(policy, `${method} ${path}`).toMatch(/default-src 'none'/);
      expect(policy, `${method} ${path}`).toMatch(/frame-ancestors 'none'/);
      expect(policy, `${method} ${path}`).not.toMatch(/unsafe-inline|unsafe-eval/);
      expect(answer.headers['x-content-type-options'], `${method} ${path}`).toBe('nosniff');
    }
  });

  it('id prefixes: the service resolves none, so a prefix of another user\'s id answers as a made-up one', async () => {
    const unknown = await send(address, { path: '/runs/0b0c1d2e', headers: { 'x-api-key': bob } });
    const conversation = await send(address, { path: '/conversations/0b0c1d2e', headers: { 'x-api-key': bob } });
    expect([unknown.status, conversation.status]).toEqual([404, 404]);
  });
});
