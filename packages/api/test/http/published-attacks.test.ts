/**
 * Mechanisms published against other self-hosted AI and agent HTTP services (and the Node and
 * Fastify layers under them), each tried against this service over loopback. Every case names
 * where it was published; each asserts what must hold: the status and `detail`, nothing stored
 * or run, and the service still answering.
 */
import { createServer, type Server } from 'node:http';
import { gzipSync } from 'node:zlib';
import type { AddressInfo } from 'node:net';
import { scripted, startScriptedModel, type ScriptedModel } from '@mada/testkit';
import { pino } from 'pino';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../support/app.js';
import { DIALECTS } from '../support/databases.js';
import { openSocket, parseRaw, readUntilClosed, send } from '../support/raw-http.js';
import { scrape } from '../support/metrics.js';
import { registeredRoutes } from '../support/routes.js';
import { parseFrames } from '../support/sse.js';

const HOST = '127.0.0.1';
const CREATE = '{"agent_type":"task"}';
const MISSING_RUN = '/runs/00000000-0000-4000-8000-000000000000';

/** Writes `text` on a fresh connection and returns everything the server answers until it closes. */
async function rawExchange(base: string, text: string): Promise<string> {
  const socket = await openSocket(base);
  const closed = readUntilClosed(socket);
  socket.write(text);
  return closed;
}

/** The status lines of every response in `text`, in order (pipelined answers included). */
const statusesOf = (text: string): number[] => [...text.matchAll(/HTTP\/1\.1 (\d{3}) /g)].map((m) => Number(m[1]));

const createRequest = (extra = ''): string =>
  `POST /conversations/ HTTP/1.1\r\nHost: ${HOST}\r\nContent-Type: application/json\r\n${extra}Content-Length: ${CREATE.length}\r\n\r\n${CREATE}`;

async function conversationCount(base: string, headers: Record<string, string> = {}): Promise<number> {
  return ((await send(base, { path: '/conversations/', headers })).json() as { total: number }).total;
}

/** Deletes every conversation of the local user, so each case starts from none. */
async function clearConversations(base: string): Promise<void> {
  const { conversations } = (await send(base, { path: '/conversations/?limit=100' })).json() as { conversations: { id: string }[] };
  for (const { id } of conversations) await send(base, { method: 'DELETE', path: `/conversations/${id}` });
}

describe('local mode: request framing, bodies and browsers', () => {
  let t: TestApp;
  let base: string;
  beforeAll(async () => {
    t = await createTestApp({ env: { REQUEST_TIMEOUT_SECONDS: '1', RATE_LIMIT_PER_MINUTE: '0' } });
    base = await t.app.listen({ port: 0, host: HOST });
  });
  afterEach(async () => clearConversations(base));
  afterAll(async () => t.close());

  // Each hides a second request (a conversation create) where a proxy and Node could disagree on
  // where the first one ends. Node must refuse the message outright, so nothing is smuggled.
  const SMUGGLED: [string, string][] = [
    // llhttp: "Content-Length can't be present with Transfer-Encoding" (nodejs http-parser-private#4, RFC 7230 3.3.3)
    ['Content-Length with Transfer-Encoding (CL.TE)', `POST /conversations/ HTTP/1.1\r\nHost: ${HOST}\r\nContent-Type: application/json\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n${createRequest()}`],
    // CVE-2021-22959 (llhttp accepted a space between header name and colon)
    ['space before the colon', `POST /conversations/ HTTP/1.1\r\nHost: ${HOST}\r\nContent-Type: application/json\r\nContent-Length : 0\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n${createRequest()}`],
    // CVE-2018-7159 (Node read "Content-Length: 1 2" as 12)
    ['spaces inside Content-Length', `POST /conversations/ HTTP/1.1\r\nHost: ${HOST}\r\nContent-Type: application/json\r\nContent-Length: 0 ${createRequest().length}\r\n\r\n${createRequest()}`],
    // RFC 9112 6.3: two differing lengths are an unrecoverable error
    ['two differing Content-Length headers', `POST /conversations/ HTTP/1.1\r\nHost: ${HOST}\r\nContent-Type: application/json\r\nContent-Length: 0\r\nContent-Length: ${createRequest().length}\r\n\r\n${createRequest()}`],
    // CVE-2022-32213 / CVE-2022-32215 (llhttp: chunked not last, or folded onto a second line)
    ['chunked not the last coding', `POST /conversations/ HTTP/1.1\r\nHost: ${HOST}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked, identity\r\n\r\n0\r\n\r\n${createRequest()}`],
    ['Transfer-Encoding folded over two lines', `POST /conversations/ HTTP/1.1\r\nHost: ${HOST}\r\nContent-Type: application/json\r\nTransfer-Encoding: identity\r\n , chunked\r\n\r\n0\r\n\r\n${createRequest()}`],
    ['an unknown Transfer-Encoding', `POST /conversations/ HTTP/1.1\r\nHost: ${HOST}\r\nContent-Type: application/json\r\nTransfer-Encoding: xchunked\r\n\r\n0\r\n\r\n${createRequest()}`],
    // CVE-2024-27982 (a header line starting with a space, read as part of Content-Length)
    ['a header line that starts with a space', `POST /conversations/ HTTP/1.1\r\nHost: ${HOST}\r\nContent-Type: application/json\r\n Content-Length: ${createRequest().length}\r\n\r\n${createRequest()}`],
    // CVE-2023-30589 (llhttp took a lone CR as the end of a header line)
    ['a lone CR ending header lines', `POST /conversations/ HTTP/1.1\rHost: ${HOST}\rContent-Type: application/json\rContent-Length: ${CREATE.length}\r\r\n\r\n${CREATE}`],
    // CVE-2022-32214 (llhttp took a bare LF as a line end, where a proxy may not)
    ['bare LF line ends hiding a Content-Length', `POST /conversations/ HTTP/1.1\r\nHost: ${HOST}\r\nContent-Type: application/json\r\nX-Pad: a\nContent-Length: ${createRequest().length}\r\n\r\n${createRequest()}`],
    // CVE-2024-22019 (unbounded chunk extensions: reads without end, past the body limit)
    ['chunk extensions without end', `POST /conversations/ HTTP/1.1\r\nHost: ${HOST}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n1;${'a'.repeat(20_000)}\r\n{\r\n0\r\n\r\n`],
  ];

  it.each(SMUGGLED)('refuses %s with 400 Malformed HTTP request, smuggling nothing', async (_name, text) => {
    const answer = await rawExchange(base, text);
    expect(statusesOf(answer)).toEqual([400]);
    expect(parseRaw(answer)).toEqual({ status: 400, body: { detail: 'Malformed HTTP request' } });
    expect(await conversationCount(base)).toBe(0);
  });

  // PortSwigger, "Browser-Powered Desync Attacks" (2022): a server that answers before reading the
  // body leaves it on the connection, where it is parsed as the next request.
  it('discards the body of a request it refused early instead of reading it as the next request', async () => {
    const hidden = createRequest();
    const text = `POST /conversations/ HTTP/1.1\r\nHost: ${HOST}\r\nOrigin: http://attacker.example\r\nContent-Type: application/json\r\nContent-Length: ${hidden.length}\r\n\r\n${hidden}GET /health HTTP/1.1\r\nHost: ${HOST}\r\nConnection: close\r\n\r\n`;
    expect(statusesOf(await rawExchange(base, text))).toEqual([403, 200]);
    expect(await conversationCount(base)).toBe(0);
  });

  // RFC 9112 9.3.2 pipelining: answers come back in order, one per request, each framed on its own
  // (a client must not pipeline after a POST whose outcome it depends on, so only reads follow it).
  it('answers pipelined requests in order, one answer each', async () => {
    const text = `${createRequest()}GET /health HTTP/1.1\r\nHost: ${HOST}\r\n\r\nGET /agents/ HTTP/1.1\r\nHost: ${HOST}\r\nConnection: close\r\n\r\n`;
    const answer = await rawExchange(base, text);
    expect(statusesOf(answer)).toEqual([201, 200, 200]);
    expect(await conversationCount(base)).toBe(1);
  });

  // RFC 9110 10.1.1 Expect: 100-continue is honoured; any other expectation is refused with a detail.
  it('honours Expect: 100-continue and refuses other expectations with 417 and a detail', async () => {
    const socket = await openSocket(base);
    const closed = readUntilClosed(socket);
    socket.write(`POST /conversations/ HTTP/1.1\r\nHost: ${HOST}\r\nExpect: 100-continue\r\nContent-Type: application/json\r\nContent-Length: ${CREATE.length}\r\nConnection: close\r\n\r\n`);
    await new Promise((resolve) => setTimeout(resolve, 100));
    socket.write(CREATE);
    const answer = await closed;
    expect(statusesOf(answer)).toEqual([100, 201]);
    await clearConversations(base);

    const refused = await rawExchange(base, `${createRequest('Expect: 200-ok\r\n').replace('Content-Length', 'Connection: close\r\nContent-Length')}`);
    expect(parseRaw(refused)).toEqual({ status: 417, body: { detail: 'Expectation failed: only 100-continue is supported' } });
    expect(await conversationCount(base)).toBe(0);
  });

  // fastify GHSA-3fjj-p79j-c9hh / CVE-2022-41919: a Content-Type a browser sends without a CORS
  // preflight, but with "application/json" somewhere in it, reached the JSON parser.
  it.each([
    'text/plain; charset=application/json',
    'text/plain;application/json',
    'application/x-www-form-urlencoded; application/json',
    'multipart/form-data; boundary=application/json',
    'TEXT/PLAIN',
  ])('refuses a no-preflight Content-Type that mentions JSON (%s) with 415', async (type) => {
    const response = await send(base, { method: 'POST', path: '/conversations/', headers: { 'content-type': type }, body: CREATE });
    expect([response.status, response.json()]).toEqual([415, { detail: 'Unsupported media type: send application/json' }]);
    expect(await conversationCount(base)).toBe(0);
  });

  // fastify CVE-2025-32442 (case, spaces), CVE-2026-25223 (a tab before ";") and GHSA-573f-x89g-hqp9
  // (a bare trailing ";"): a Content-Type the validator and the parser read differently skipped
  // body validation.
  it.each(['Application/JSON', 'application/json ;charset=utf-8', 'application/json\t; charset=utf-8', 'application/json;', 'application/jsonx', ' application/json'])(
    'still validates a body sent as %j, or refuses it, never storing it unchecked',
    async (type) => {
      for (const body of ['{"agent_type":5}', '{"agent_type":"task","working_dir":"/etc"}']) {
        const response = await send(base, { method: 'POST', path: '/conversations/', headers: { 'content-type': type }, body });
        expect(response.status, `${type} ${body}`).toBeGreaterThanOrEqual(400);
        expect(response.status, `${type} ${body}`).toBeLessThan(500);
        expect(response.json()).toHaveProperty('detail');
      }
      expect(await conversationCount(base)).toBe(0);
    },
  );

  // fastify/fastify#1427 (prototype poisoning through JSON.parse), secure-json-parse: a body with
  // `__proto__` or `constructor.prototype` keys.
  it.each([
    '{"agent_type":"task","__proto__":{"polluted":true}}',
    '{"agent_type":"task","constructor":{"prototype":{"polluted":true}}}',
    '{"agent_type":"task","working_dir":".","x":{"__proto__":{"polluted":true}}}',
  ])('refuses a prototype-poisoning body with 422 json_invalid (%s)', async (body) => {
    const response = await send(base, { method: 'POST', path: '/conversations/', body });
    expect(response.status).toBe(422);
    expect(response.json()).toMatchObject({ detail: [{ loc: ['body'], type: 'json_invalid' }] });
    expect('polluted' in {}).toBe(false);
    expect(await conversationCount(base)).toBe(0);
  });

  // content-type-parser ReDoS (/^(.*?)\/(.*?)([\t ]*;.*)?$/, snyk): a long crafted header value.
  it('parses a long, crafted Content-Type header quickly', async () => {
    const started = Date.now();
    for (const type of [`application/json; a="${'\\'.repeat(12_000)}`, `${'a/'.repeat(6_000)}json`, `application/json${' '.repeat(12_000)};`]) {
      const response = await send(base, { method: 'POST', path: '/conversations/', headers: { 'content-type': type }, body: '{"agent_type":5}' });
      expect(response.status).toBeGreaterThanOrEqual(400);
      expect(response.status).toBeLessThan(500);
      expect(response.json()).toHaveProperty('detail');
    }
    expect(Date.now() - started).toBeLessThan(2000);
    expect(await conversationCount(base)).toBe(0);
  });

  // DNS rebinding: Ollama CVE-2024-28224, OpenHands/OpenHands#1219, rmcp CVE-2026-42559,
  // apollographql/apollo-mcp-server#602 — the page's own name arrives as Host.
  it.each([
    ['a rebound name', { host: 'rebind.attacker.example:8095' }],
    ['a rebound name with a trailing dot', { host: 'localhost.' }],
    ['a userinfo prefix', { host: 'localhost@attacker.example' }],
    ['an IPv6 address that is not loopback', { host: '[::ffff:10.0.0.1]' }],
    ['an IPv4-mapped loopback spelled as IPv6', { host: '[::ffff:7f00:1]' }],
    // fastify GHSA-444r-cwp2-x5xf: X-Forwarded-Host must not stand in for Host
    ['X-Forwarded-Host naming loopback', { host: 'attacker.example', 'x-forwarded-host': 'localhost' }],
  ])('refuses %s with 403 Host not allowed, on the API and the event stream', async (_name, headers) => {
    for (const [method, path] of [['POST', '/conversations/'], ['GET', `${MISSING_RUN}/events`]] as const) {
      const response = await send(base, { method, path, headers, ...(method === 'POST' ? { body: CREATE } : {}) });
      expect([response.status, response.json()], `${method} ${path}`).toEqual([403, { detail: 'Host not allowed' }]);
    }
    expect(await conversationCount(base)).toBe(0);
  });

  // Cross-site requests with a loopback Host: MCP transport spec ("servers MUST validate the Origin
  // header"), pgEdge/pgedge-postgres-mcp#231; webpack-dev-server CVE-2025-30360 (IP-address origins
  // allowed); `Origin: null` from sandboxed iframes and file: pages (ag-ui-protocol/ag-ui#2548).
  // A body-less POST is a simple request a page sends without a preflight (pi-agent-dashboard#625).
  it.each(['http://attacker.example', 'http://192.168.1.5:8095', 'http://127.0.0.1:1', 'null', 'file://', 'http://localhost.attacker.example'])(
    'refuses Origin %s with 403 Origin not allowed, on the API, a body-less POST and the event stream',
    async (origin) => {
      for (const [method, path] of [['POST', '/conversations/'], ['POST', `${MISSING_RUN}/cancel`], ['GET', `${MISSING_RUN}/events`]] as const) {
        const response = await send(base, { method, path, headers: { origin }, ...(path === '/conversations/' ? { body: CREATE } : {}) });
        expect([response.status, response.json()], `${method} ${path}`).toEqual([403, { detail: 'Origin not allowed' }]);
      }
      expect(await conversationCount(base)).toBe(0);
    },
  );

  // Cross-site WebSocket hijacking: webpack-dev-server GHSA-cf66-xwfp-gvc4, pi-agent-dashboard#625.
  // The service speaks no WebSocket: an upgrade is never accepted, and a cross-site one is refused.
  it('never switches protocols on an Upgrade: websocket request', async () => {
    const upgrade = `GET /health HTTP/1.1\r\nHost: ${HOST}\r\nConnection: Upgrade, close\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n`;
    const plain = await rawExchange(base, `${upgrade}\r\n`);
    expect(plain).not.toMatch(/^HTTP\/1\.1 101/m);
    const crossSite = await rawExchange(base, `${upgrade}Origin: http://attacker.example\r\n\r\n`);
    expect(crossSite).not.toMatch(/^HTTP\/1\.1 101/m);
    expect(statusesOf(crossSite)).not.toContain(200);
  });

  // h2c smuggling (Bishop Fox, 2020) and RFC 9931 (optimistic upgrades): a proxy that passes an
  // upgrade through hands the client a raw connection to whatever accepts it.
  it('switches to no other protocol: h2c upgrades and an HTTP/2 preface get no 101', async () => {
    const h2c = await rawExchange(base, `GET /health HTTP/1.1\r\nHost: ${HOST}\r\nConnection: Upgrade, HTTP2-Settings, close\r\nUpgrade: h2c\r\nHTTP2-Settings: AAMAAABkAARAAAAAAAIAAAAA\r\n\r\n`);
    expect(h2c).not.toMatch(/HTTP\/1\.1 101/);
    const preface = await rawExchange(base, 'PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n');
    expect(parseRaw(preface)).toEqual({ status: 400, body: { detail: 'Malformed HTTP request' } });
    expect((await send(base, { path: '/health' })).status).toBe(200);
  });

  // JSON interoperability (Bishop Fox, "An Exploration of JSON Interoperability Vulnerabilities",
  // 2021): duplicate keys, comments, huge numbers, a BOM. What is validated must be what is stored.
  it('stores the value it validated when a key comes twice, and refuses JSON extensions', async () => {
    const last = await send(base, { method: 'POST', path: '/conversations/', body: '{"agent_type":"task","working_dir":"/etc","working_dir":"."}' });
    expect([last.status, (last.json() as { working_dir: string }).working_dir]).toEqual([201, '.']);
    const refused = await send(base, { method: 'POST', path: '/conversations/', body: '{"agent_type":"task","working_dir":".","working_dir":"/etc"}' });
    expect([refused.status, refused.json()]).toEqual([400, { detail: 'Working directory not allowed: /etc' }]);
    // A leading BOM is dropped, as RFC 8259 8.1 lets a parser do: the rest is read and checked as usual.
    expect((await send(base, { method: 'POST', path: '/conversations/', body: '\uFEFF{"agent_type":"task","working_dir":"/etc"}' })).status).toBe(400);
    for (const body of ['{"agent_type":"task",}', '{"agent_type":"task" /* c */}', '{"agent_type":"task","title":1e999}', "{'agent_type':'task'}", '{"agent_type":NaN}']) {
      const response = await send(base, { method: 'POST', path: '/conversations/', body });
      expect(response.status, body).toBe(422);
      expect(response.json(), body).toHaveProperty('detail');
    }
    expect(await conversationCount(base)).toBe(1);
  });

  // Ollama CVE-2024-39719 (whether a path exists, told apart by the error) and CVE-2024-39721
  // (a request path naming /dev/random, read without end): Oligo, "More Models, More ProbLLMs".
  it('answers every working directory outside the allowed paths alike, at once, whether it exists or not', async () => {
    for (const dir of ['/etc', '/nonexistent-mada-probe', '/etc/passwd', '/dev/random', '/dev/zero', '/proc/self/fd/0']) {
      const started = Date.now();
      const response = await send(base, { method: 'POST', path: '/conversations/', body: { agent_type: 'task', working_dir: dir } });
      expect([response.status, response.json()], dir).toEqual([400, { detail: `Working directory not allowed: ${dir}` }]);
      expect(Date.now() - started, dir).toBeLessThan(1000);
    }
    expect(await conversationCount(base)).toBe(0);
  });

  // Jupyter XSSI: a JSON answer included by <script src> from another site (a no-cors GET sends no
  // Origin). Every JSON answer is typed as JSON and marked nosniff, so browsers refuse to run it.
  it('types every JSON answer as JSON with nosniff, so a script tag cannot run it', async () => {
    for (const path of ['/conversations/', '/runs', '/agents/', '/health', MISSING_RUN]) {
      const response = await send(base, { path });
      expect(response.headers['content-type'], path).toMatch(/^application\/json/);
      expect(response.headers['x-content-type-options'], path).toBe('nosniff');
    }
  });

  // Path traversal through an id in the URL: Ollama CVE-2024-37032 (blob digest), LocalAI
  // CVE-2024-5182 (model name), OpenHands/OpenHands#1194 (select-file).
  it.each([
    '/runs/..%2F..%2F..%2Fetc%2Fpasswd',
    '/runs/%2e%2e%2f%2e%2e%2fetc%2fpasswd/events',
    '/conversations/..%2f..%2fetc%2fpasswd',
    '/runs/00000000-0000-4000-8000-000000000000%00/checkpoints',
    '/runs/..\\..\\windows\\win.ini',
  ])('answers a traversal id (%s) with 4xx and a detail, reading no file', async (path) => {
    const response = await send(base, { path });
    expect(response.status, path).toBeGreaterThanOrEqual(400);
    expect(response.status, path).toBeLessThan(500);
    expect(response.json()).toHaveProperty('detail');
    expect(response.text).not.toMatch(/root:|\[fonts\]/);
  });

  // The docs page's static files: @fastify/swagger-ui SNYK-JS-FASTIFYSWAGGERUI-6157561 (served the
  // module's own files) and @fastify/static GHSA-83w8-p2f5-377r (route guard bypass through
  // traversal); swagger-ui CVE-2018-25031 (`?url=` loaded another site's definition).
  it('serves no file outside the docs bundle and loads no definition a query names', async () => {
    for (const path of ['/docs/static/package.json', '/docs/static/index.js', '/docs/static/../package.json', '/docs/static/%2e%2e/package.json', '/docs/static/.%2e/package.json', '/docs/static/..%2f..%2f..%2fpackage.json', '/docs/static/%2e%2e%2f%2e%2e%2f%2e%2e%2f%2e%2e%2fetc%2fpasswd', '/docs//static/package.json']) {
      const response = await send(base, { path });
      expect([403, 404], path).toContain(response.status);
      expect(response.json(), path).toHaveProperty('detail');
      expect(response.text, path).not.toMatch(/"name":|root:/);
    }
    const initializer = await send(base, { path: '/docs/static/swagger-initializer.js?url=https://attacker.example/spec.json' });
    expect(initializer.text).toContain("resolveUrl('./json')");
    expect(initializer.text).not.toMatch(/queryConfigEnabled:\s*true/);
  });

  // Open WebUI CVE-2024-12537: an unauthenticated endpoint that read any body size.
  it('refuses a body over MAX_BODY_BYTES with 413 and a detail, and keeps answering', async () => {
    const body = `{"agent_type":"task","title":"${'x'.repeat(t.settings.maxBodyBytes)}"}`;
    const response = await send(base, { method: 'POST', path: '/conversations/', body });
    expect(response.status).toBe(413);
    expect(response.json()).toHaveProperty('detail');
    expect((await send(base, { path: '/health' })).status).toBe(200);
    expect(await conversationCount(base)).toBe(0);
  });

  // The same, announced rather than sent: a Content-Length far past the limit is refused before
  // any of the body is read.
  it('refuses an announced body over MAX_BODY_BYTES at once, with 413 and a detail', async () => {
    const answer = await rawExchange(base, `POST /conversations/ HTTP/1.1\r\nHost: ${HOST}\r\nContent-Type: application/json\r\nContent-Length: 99999999999999\r\nConnection: close\r\n\r\n{"agent_type":`);
    expect(parseRaw(answer).status).toBe(413);
    expect(parseRaw(answer).body).toHaveProperty('detail');
  });

  // Decompression bombs (CWE-409; body-parser's `inflate`): a compressed body is never expanded.
  it('never inflates a body sent with Content-Encoding', async () => {
    const bomb = gzipSync(Buffer.from(`{"agent_type":"task","title":"${'a'.repeat(10_000_000)}"}`));
    for (const encoding of ['gzip', 'deflate', 'br']) {
      const answer = await rawExchange(base, `POST /conversations/ HTTP/1.1\r\nHost: ${HOST}\r\nContent-Type: application/json\r\nContent-Encoding: ${encoding}\r\nContent-Length: ${bomb.length}\r\nConnection: close\r\n\r\n${bomb.toString('latin1')}`);
      const { status, body } = parseRaw(answer);
      expect(status, encoding).toBeGreaterThanOrEqual(400);
      expect(status, encoding).toBeLessThan(500);
      expect(body, encoding).toHaveProperty('detail');
    }
    expect(await conversationCount(base)).toBe(0);
  });

  // HTTP parameter pollution (OWASP; Di Paola and Carettoni, 2009) and qs prototype pollution
  // through the query string (CVE-2022-24999): repeated or bracketed parameters.
  it('refuses repeated query parameters with 422 and builds no object from brackets', async () => {
    for (const path of ['/conversations/?limit=1&limit=100', `${MISSING_RUN}/events?after=1&after=2`, '/runs?limit=1&limit=2']) {
      const response = await send(base, { path });
      expect(response.status, path).toBe(422);
      expect(response.json(), path).toHaveProperty('detail');
    }
    const brackets = await send(base, { path: '/conversations/?__proto__[polluted]=1&constructor[prototype][polluted]=1&limit[]=5' });
    expect(brackets.status).toBeLessThan(500);
    expect('polluted' in {}).toBe(false);
  });

  // Slowloris / slow POST (CVE-2007-6750 class; Node's headersTimeout and requestTimeout).
  it('answers a body that never finishes with 408 once REQUEST_TIMEOUT_SECONDS passes', async () => {
    const answer = await rawExchange(base, `POST /conversations/ HTTP/1.1\r\nHost: ${HOST}\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"agent_type":`);
    expect(parseRaw(answer)).toEqual({ status: 408, body: { detail: 'Request timed out: it did not arrive whole in time' } });
    expect(await conversationCount(base)).toBe(0);
  });
});

// Log forging (CWE-117, OWASP "Log Injection"): a URL carrying an encoded line break and a line
// of its own that a log reader would take for the service's.
describe('request logs', () => {
  it('write each request as one JSON line, whatever its URL holds', async () => {
    let written = '';
    const logger = pino({ level: 'info' }, { write: (text: string) => void (written += text) });
    const t = await createTestApp({ logger });
    try {
      const base = await t.app.listen({ port: 0, host: HOST });
      const forged = encodeURIComponent('\n{"level":60,"msg":"forged"}\r\n');
      for (const path of [`/runs/${forged}`, `/conversations/?q=${forged}`, `/nope${forged}`]) {
        expect((await send(base, { path, headers: { 'user-agent': 'x\u00ff{"msg":"forged"}' } })).status).toBeLessThan(500);
      }
      const lines = written.split('\n').filter((line) => line !== '');
      expect(lines.length).toBeGreaterThan(0);
      for (const line of lines) expect((JSON.parse(line) as { msg: string }).msg).not.toBe('forged');
    } finally {
      await t.close();
    }
  });
});

// Metric label cardinality (artifact-keeper#2220, sigstore/timestamp-authority#1374, api7/aisix#451):
// a label taken from the raw path or method gives every made-up URL a series of its own.
describe('request metrics', () => {
  it('count made-up paths and methods under a bounded set of labels', async () => {
    const t = await createTestApp();
    try {
      const base = await t.app.listen({ port: 0, host: HOST });
      for (let i = 0; i < 40; i += 1) {
        await send(base, { path: `/probe-${i}/.env?x=${i}` });
        await send(base, { path: `/runs/${i}-not-a-uuid` });
      }
      for (const method of ['PROPFIND', 'MKCOL', 'PURGE', 'LOCK']) await send(base, { method, path: `/${method.toLowerCase()}` });
      const series = (await scrape(t.app)).split('\n').filter((line) => line.startsWith('mada_http_requests_total{'));
      expect(series.join('\n')).not.toMatch(/probe-|not-a-uuid|PROPFIND|MKCOL|PURGE|LOCK/);
      expect(series.length).toBeLessThan(10);
    } finally {
      await t.close();
    }
  });
});

describe('local mode: rate limits counted by the real address', () => {
  let t: TestApp;
  let base: string;
  beforeAll(async () => {
    t = await createTestApp({ env: { RATE_LIMIT_PER_MINUTE: '3' } });
    base = await t.app.listen({ port: 0, host: HOST });
  });
  afterAll(async () => t.close());

  // fastify/fastify-rate-limit#7, express-rate-limit#134, lm-sys/FastChat#3784: a client-set
  // X-Forwarded-For (or X-Real-IP) gave every request a fresh bucket.
  it('counts requests by the socket address whatever X-Forwarded-For or X-Real-IP say', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 5; i += 1) {
      const headers = { 'x-forwarded-for': `203.0.113.${i}`, 'x-real-ip': `198.51.100.${i}`, forwarded: `for=192.0.2.${i}` };
      statuses.push((await send(base, { path: '/agents/', headers })).status);
    }
    expect(statuses).toEqual([200, 200, 200, 429, 429]);
  });
});

describe('keyed mode: credentials and ownership', () => {
  const ALICE = { 'x-api-key': 'alice-key-0123456789' };
  const BOB = { 'x-api-key': 'bob-key-0123456789' };
  let t: TestApp;
  let base: string;
  beforeEach(async () => {
    t = await createTestApp({ env: { API_KEYS: 'alice:alice-key-0123456789,bob:bob-key-0123456789', CORS_ORIGINS: 'https://app.example' } });
    base = await t.app.listen({ port: 0, host: HOST });
  });
  afterEach(async () => t.close());

  // Ollama GHSA-f6mr-38g8-39rg (model management without authentication): every route but the
  // health check, the docs, the metrics (which has a token of its own), the console's static
  // files and its sign-in and sign-out (which take the key, or end a session) needs a key.
  it('answers every registered route without a key with 401 Missing API key', async () => {
    const open = /^(GET|HEAD) \/($|health|docs|metrics|openapi\.json|app)|^(POST|DELETE) \/session$|^OPTIONS /;
    const id = '00000000-0000-4000-8000-000000000000';
    for (const route of registeredRoutes(t.app).filter((r) => !open.test(r))) {
      const [method, pattern] = route.split(' ') as [string, string];
      const path = pattern.replace(/:[a-z_]+/g, id).replace('*', '');
      const response = await send(base, { method, path, ...(method === 'POST' ? { body: {} } : {}) });
      // Past 30 failures a minute the address is refused before its key is even read (auth-failures.ts).
      expect([401, 429], route).toContain(response.status);
      if (method !== 'HEAD') expect(response.json(), route).toEqual({ detail: response.status === 401 ? 'Missing API key' : expect.stringMatching(/^Too many failed authentication attempts/) });
    }
  });

  // Open WebUI CVE-2026-45339 (a key honoured through a second header) and Jupyter's token in the
  // URL (it ends up in logs, history and Referer): the key is read from X-API-Key alone.
  it.each([
    ['Authorization: Bearer', { authorization: 'Bearer alice-key-0123456789' }, '/agents/'],
    ['a query parameter', {}, '/agents/?api_key=alice-key-0123456789'],
    ['a token parameter', {}, '/agents/?token=alice-key-0123456789'],
    ['a cookie', { cookie: 'x-api-key=alice-key-0123456789' }, '/agents/'],
  ])('takes no key from %s', async (_name, headers, path) => {
    const response = await send(base, { path, headers });
    expect([response.status, response.json()]).toEqual([401, { detail: 'Missing API key' }]);
  });

  // Two X-API-Key lines, one per user, where a proxy may read the other one (as with two Host
  // headers): neither user is taken.
  it('takes no user from two X-API-Key headers, in either order', async () => {
    for (const keys of [[BOB, ALICE], [ALICE, BOB]]) {
      const text = `GET /conversations/ HTTP/1.1\r\nHost: ${HOST}\r\n${keys.map((k) => `X-API-Key: ${k['x-api-key']}\r\n`).join('')}Connection: close\r\n\r\n`;
      expect(parseRaw(await rawExchange(base, text))).toEqual({ status: 401, body: { detail: 'Invalid API key' } });
    }
  });

  // Cross-Site Tracing (Grossman, 2003): a TRACE answer echoing the request's headers hands a
  // page the credential it could not read. TRACE is not served, and nothing is echoed.
  it('echoes no header back to a TRACE request', async () => {
    const response = await send(base, { method: 'TRACE', path: '/agents/', headers: ALICE });
    expect(response.status).toBeGreaterThanOrEqual(400);
    expect(response.status).toBeLessThan(500);
    expect(response.text).not.toContain(ALICE['x-api-key']);
  });

  // Open WebUI CVE-2026-45349 (continuing another user's chat by its id): another user's
  // conversation answers 403 Not authorized (SPEC.md), whatever the route, and stays as it was.
  it("answers another user's conversation id with 403 on every route, changing nothing", async () => {
    const created = await send(base, { method: 'POST', path: '/conversations/', headers: ALICE, body: { agent_type: 'task' } });
    const { id } = created.json() as { id: string };
    for (const [method, path, body] of [
      ['GET', `/conversations/${id}`, undefined],
      ['GET', `/conversations/${id}/messages`, undefined],
      ['POST', `/conversations/${id}/save`, { user_content: 'hi', assistant_content: 'there' }],
      ['POST', `/conversations/${id}/messages`, { content: 'hi' }],
      ['POST', `/conversations/${id}/stream`, { content: 'hi' }],
      ['DELETE', `/conversations/${id}`, undefined],
    ] as const) {
      const response = await send(base, { method, path, headers: BOB, ...(body ? { body } : {}) });
      expect([response.status, response.json()], `${method} ${path}`).toEqual([403, { detail: 'Not authorized' }]);
    }
    expect((await send(base, { path: `/conversations/${id}`, headers: ALICE })).json()).toMatchObject({ id, messages: [] });
  });

  // Chrome Private Network Access (the "non-HTTPS private access blocking" the webpack-dev-server
  // CVE-2025-30360 advisory relies on): a public page asks in a preflight whether it may
  // reach a private address. Only a listed origin gets any CORS answer, and none grants that.
  it('grants a cross-site preflight nothing unless its origin is listed, and never private-network access', async () => {
    const ask = { 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type,x-api-key', 'access-control-request-private-network': 'true' };
    const hostile = await send(base, { method: 'OPTIONS', path: '/conversations/', headers: { ...ask, origin: 'https://attacker.example' } });
    expect(hostile.headers['access-control-allow-origin']).toBeUndefined();
    expect(hostile.headers['access-control-allow-private-network']).toBeUndefined();
    const listed = await send(base, { method: 'OPTIONS', path: '/conversations/', headers: { ...ask, origin: 'https://app.example' } });
    expect(listed.headers['access-control-allow-origin']).toBe('https://app.example');
    expect(listed.headers['access-control-allow-private-network']).toBeUndefined();
  });

  // CORS with the null origin (netty/netty#3436, ag-ui-protocol/ag-ui#2548) and cache poisoning by
  // a shared cache that ignores Origin: only listed origins are named, and the answer varies by Origin.
  it('grants CORS to listed origins only, never to null, and marks answers as varying by Origin', async () => {
    const listed = await send(base, { path: '/agents/', headers: { ...ALICE, origin: 'https://app.example' } });
    expect(listed.headers['access-control-allow-origin']).toBe('https://app.example');
    expect(listed.headers.vary).toMatch(/origin/i);
    for (const origin of ['null', 'https://attacker.example', 'https://app.example.attacker.example']) {
      const response = await send(base, { path: '/agents/', headers: { ...ALICE, origin } });
      expect(response.headers['access-control-allow-origin'], origin).toBeUndefined();
      expect(response.headers['access-control-allow-credentials'], origin).toBeUndefined();
    }
  });
});

// Ollama /api/pull and /api/push, LocalAI mudler/LocalAI#10665 (POST /models/apply fetched any
// URL), Gradio /queue/join and /proxy (CVE-2026-28416): a request body naming a URL the service
// then fetches. A run request that names URLs in every place one might be read fetches none of them.
describe('server-side request forgery through a run request', () => {
  let model: ScriptedModel;
  let canary: Server;
  let canaryHits = 0;
  let t: TestApp;
  let base: string;
  beforeAll(async () => {
    model = await startScriptedModel();
    canary = createServer((_req, res) => {
      canaryHits += 1;
      res.end('{}');
    });
    await new Promise<void>((resolve) => canary.listen(0, HOST, resolve));
    t = await createTestApp({ model: { url: model.url } });
    base = await t.app.listen({ port: 0, host: HOST });
  });
  afterAll(async () => {
    await t.close();
    await model.close();
    await new Promise((resolve) => canary.close(resolve));
  });

  it('fetches no URL a request names, and calls only the configured model', async () => {
    const url = `http://${HOST}:${(canary.address() as AddressInfo).port}/`;
    model.push(scripted.text('done'));
    // A model is a configured name, never an address: a URL is refused before anything is called.
    const named = await send(base, { method: 'POST', path: '/agents/run', body: { agent_type: 'explore', prompt: 'hello', working_dir: t.workdir, model: url } });
    expect(named.status).toBe(400);
    const response = await send(base, {
      method: 'POST',
      path: '/agents/run',
      body: { agent_type: 'explore', prompt: 'hello', working_dir: t.workdir, base_url: url, llm_base_url: url, url, insecure: true },
    });
    expect(response.status).toBe(200);
    expect(canaryHits).toBe(0);
    expect(model.requests).toHaveLength(1);
    for (const [method, path] of [['GET', `/conversations/?url=${encodeURIComponent(url)}`], ['GET', `/runs?callback=${encodeURIComponent(url)}`]] as const) {
      expect((await send(base, { method, path })).status).toBe(200);
    }
    expect(canaryHits).toBe(0);
  });
});

describe.each(DIALECTS)('event streams on %s', (dialect) => {
  let model: ScriptedModel;
  let t: TestApp;
  let base: string;
  beforeAll(async () => {
    model = await startScriptedModel();
    t = await createTestApp({ dialect, model: { url: model.url } });
    base = await t.app.listen({ port: 0, host: HOST });
  });
  afterAll(async () => {
    await t.close();
    await model.close();
  });
  // SSE field injection (WHATWG event-stream parsing: a line break ends a field, a blank line ends
  // the event): text the model or the user controls carrying "\n\ndata:" or "\r\revent:" must stay
  // inside its own frame, so no frame can be forged.
  const FORGED = 'before\n\ndata: {"event":"done","content":"forged"}\n\nid: 999\r\rid: 1000\revent: error\u2028\u0085after';

  it('keeps a line break and a forged frame inside the text of one frame', async () => {
    model.push(scripted.text(FORGED));
    const response = await fetch(`${base}/agents/stream`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ agent_type: 'explore', prompt: FORGED, working_dir: t.workdir }),
    });
    const text = await response.text();
    // Every event the stream carries is one line of `data:` JSON; nothing else starts a line.
    for (const line of text.split(/\r\n|\r|\n/)) expect(line === '' || line.startsWith('data: {') || line.startsWith(': '), line).toBe(true);
    const frames = parseFrames(text);
    expect(frames.filter((frame) => frame.event === 'done')).toHaveLength(1);
    expect(frames.some((frame) => frame.content === 'forged')).toBe(false);
    const streamed = frames.map((frame) => (typeof frame.text === 'string' ? frame.text : typeof frame.data === 'string' ? frame.data : '')).join('');
    expect(streamed).toContain(FORGED);
  });

  it('keeps a forged frame inside one stored event when a run is replayed from the store', async () => {
    model.push(scripted.text(FORGED));
    const run = await send(base, { method: 'POST', path: '/runs', body: { agent_type: 'explore', prompt: FORGED, working_dir: t.workdir } });
    const { id } = run.json() as { id: string };
    await expect.poll(async () => ((await send(base, { path: `/runs/${id}` })).json() as { status: string }).status).toBe('succeeded');
    const replay = await send(base, { path: `/runs/${id}/events` });
    const lines = replay.text.split(/\r\n|\r|\n/).filter((line) => line !== '');
    for (const line of lines) expect(/^(id: \d+|data: \{.*\}|: .*)$/s.test(line), line).toBe(true);
    expect(lines.filter((line) => line.startsWith('id: ')).map((line) => Number(line.slice(4)))).toEqual(lines.filter((line) => line.startsWith('id: ')).map((_line, i) => i + 1));
    expect(replay.text).not.toMatch(/^id: 999/m);
  });

  // Last-Event-ID abuse (NVIDIA-AI-Blueprints/aiq#272, athrvk/vayu#21): the resume point is
  // client-controlled. Out-of-range, negative or odd values must answer 4xx or a plain stream,
  // never a 500 from the database.
  it.each(['2147483648', '99999999999999999999999', '-1', '1e3', '0x10', ' 1', '1, 2'])('resumes after Last-Event-ID %j without a server error', async (lastEventId) => {
    model.push(scripted.text('hello'));
    const run = await send(base, { method: 'POST', path: '/runs', body: { agent_type: 'explore', prompt: 'hi', working_dir: t.workdir } });
    expect(run.status).toBe(202);
    const { id } = run.json() as { id: string };
    await expect.poll(async () => ((await send(base, { path: `/runs/${id}` })).json() as { status: string }).status).toBe('succeeded');
    for (const [path, headers] of [
      [`/runs/${id}/events`, { 'last-event-id': lastEventId }],
      [`/runs/${id}/events?after=${encodeURIComponent(lastEventId)}`, {}],
    ] as const) {
      const response = await send(base, { path, headers });
      expect(response.status, `${path} ${lastEventId}`).toBeLessThan(500);
      if (response.status === 200) expect(response.headers['content-type']).toMatch(/^text\/event-stream/);
      else expect(response.json()).toHaveProperty('detail');
    }
    expect((await send(base, { path: '/health' })).status).toBe(200);
  });
});
