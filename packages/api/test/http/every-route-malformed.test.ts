import { Agent, request as httpRequest } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../support/app.js';
import { DIALECTS } from '../support/databases.js';
import { sample, type Schema } from '../support/openapi-sample.js';

/**
 * SPEC.md section 7 and the project's rule: every route answers malformed input with a 4xx that
 * carries a `detail` (a string, or the 422 validation list), never a 500 and never a stack trace.
 * The routes come from the service's own OpenAPI document, so a route added later is swept
 * without anyone listing it here. Each operation gets the same bounded, deterministic set of bad
 * path parameters, query strings, header parameters and bodies, once as an admin and once as a
 * plain member, on each store.
 *
 * Three answers differ, as their contracts say, and are still held to "no stack trace": `/mcp`
 * speaks MCP's Streamable HTTP transport (TEAMS.md section 12), whose errors are JSON-RPC error
 * objects that MCP clients read, so `error.message` stands for `detail` there; an event stream
 * that opens is read only to its headers (it would otherwise never end); and a conversation turn
 * whose input is acceptable meets the unreachable model and gets the 500 `Agent error: ...` that
 * SPEC.md section 7 names (AGENT_ERROR below).
 */

const ROOT_KEY = 'root-key-3f7a9c1e5d20';
const MEMBER_ID = 'member-sweep';
/** The user the admin routes' bodies name: changing or disabling it leaves the member's key working. */
const TARGET_ID = 'target-sweep';
const SOME_ID = '00000000-0000-4000-8000-000000000000';
/** Per request: an answer that takes longer than this counts as a hang. */
const ANSWER_TIMEOUT_MS = 10_000;

type Json = Record<string, unknown>;
interface Parameter {
  name: string;
  in: string;
}
interface Operation {
  parameters?: Parameter[];
  requestBody?: { content?: Record<string, { schema?: Schema }> };
}
interface Document {
  paths: Record<string, Record<string, Operation>>;
  components?: { schemas?: Record<string, Schema> };
}

interface Probe {
  method: string;
  path: string;
  headers?: Record<string, string>;
  body?: string;
  /** What the probe is, for the failure list. */
  what: string;
}

interface Answer {
  status: number;
  contentType: string;
  text: string;
}

/**
 * One request over a fresh loopback connection, the path sent exactly as written (`%00`, `%ZZ`).
 * An event stream is read only to its headers: the answer's status is what counts there.
 */
function send(base: string, probe: Probe, key: string, agent: Agent | false = false): Promise<Answer> {
  const url = new URL(base);
  // A length of its own: Node sends a DELETE's body unframed otherwise, which no client does.
  const length = probe.body === undefined ? {} : { 'content-length': String(Buffer.byteLength(probe.body)) };
  const headers: Record<string, string> = { 'x-api-key': key, ...length, ...probe.headers };
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: url.hostname, port: url.port, method: probe.method, path: probe.path, agent, headers }, (res) => {
      const contentType = String(res.headers['content-type'] ?? '');
      if (contentType.startsWith('text/event-stream')) {
        res.destroy();
        resolve({ status: res.statusCode ?? 0, contentType, text: '' });
        return;
      }
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, contentType, text }));
      res.on('error', reject);
    });
    req.setTimeout(ANSWER_TIMEOUT_MS, () => req.destroy(new Error(`no answer in ${ANSWER_TIMEOUT_MS} ms`)));
    req.on('error', reject);
    req.end(probe.body);
  });
}

/** Path parameter values that are no id of anything. */
const BAD_PATH_VALUES = ['not-a-uuid', '%00', 'x'.repeat(5000), '..%2F..', '%ZZ', `${SOME_ID}%00`, '%2e%2e'];

/** Query strings of the wrong type, for each named parameter and for the paging ones every list takes. */
const badQueries = (names: string[]): string[] => [
  ...new Set(
    [...names, 'limit', 'after'].flatMap((name) => [
      `${name}=-1`,
      `${name}=1e309`,
      `${name}=abc`,
      `${name}=${'9'.repeat(400)}`,
      `${name}=-99999999999999999999`,
      `${name}=1&${name}=2`,
      `${name}[]=`,
      `${name}=%00`,
      // Bad percent-encoding, a lone surrogate half in UTF-8, an overlong NUL: none is valid UTF-8.
      `${name}=%ZZ`,
      `${name}=%ED%A0%80`,
      `${name}=%C0%80`,
    ]),
  ),
];

const JSON_TYPE = { 'content-type': 'application/json' };
const nested = (depth: number): string => '{"a":'.repeat(depth) + '1' + '}'.repeat(depth);

/** Bodies of the wrong JSON type, not JSON at all, or of another media type. */
const BAD_BODIES: { what: string; headers: Record<string, string>; body?: string }[] = [
  { what: 'null', headers: JSON_TYPE, body: 'null' },
  { what: '[]', headers: JSON_TYPE, body: '[]' },
  { what: '"text"', headers: JSON_TYPE, body: '"text"' },
  { what: '42', headers: JSON_TYPE, body: '42' },
  { what: '64 levels deep', headers: JSON_TYPE, body: nested(64) },
  { what: 'unknown fields', headers: JSON_TYPE, body: '{"unknown_field":1,"__proto__":{"polluted":true},"constructor":{"prototype":{"x":1}}}' },
  { what: 'raw 1e309', headers: JSON_TYPE, body: '{"n":1e309}' },
  { what: 'not JSON', headers: JSON_TYPE, body: '{"a":' },
  { what: 'not JSON at all', headers: JSON_TYPE, body: 'hello' },
  { what: 'a lone surrogate in the text', headers: JSON_TYPE, body: '{"a":"\ud800"}' },
  { what: 'text/plain', headers: { 'content-type': 'text/plain' }, body: 'hello' },
  { what: 'a form', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'a=1&b=2' },
  { what: 'a broken media type', headers: { 'content-type': ';;;' }, body: '{}' },
  { what: 'JSON with an odd charset', headers: { 'content-type': 'application/json; charset=ebcdic' }, body: '{}' },
  { what: 'empty JSON', headers: JSON_TYPE, body: '' },
  { what: 'no body at all', headers: {} },
];

/** Values put into each field the body's schema names: of the wrong type, or strings no field should take. */
const BAD_FIELD_VALUES = [
  '"a\\u0000b"',
  '"\\udfff\\ud800"',
  '1e309',
  '-0',
  '9007199254740993',
  'null',
  '[{}]',
  '{"__proto__":{"polluted":true},"constructor":"x"}',
  `"${'x'.repeat(100_000)}"`,
];

/** Header values no header the document names should take (Node refuses to send NUL or CR). */
const BAD_HEADER_VALUES = ['x'.repeat(5000), '-1', '1e309', 'abc', ' ', '%00', '\u00ff\u00fe', '1, 2'];

/**
 * The body "Try it out" sends (a valid one where the document's examples are), so that a bad
 * value in one field meets the route's own code rather than only a complaint about the others.
 */
function sampleBody(operation: Operation, document: Document): Json {
  const schema = operation.requestBody?.content?.['application/json']?.schema;
  const body = schema ? sample(schema, document) : undefined;
  return body !== null && typeof body === 'object' && !Array.isArray(body) ? (body as Json) : {};
}

/** The sample body with `field` written as `raw` JSON text (1e309 and lone surrogates survive only as text). */
function withField(base: Json, field: string, raw: string): string {
  const entries = Object.entries({ ...base, [field]: null }).map(([name, value]) => `${JSON.stringify(name)}:${name === field ? raw : JSON.stringify(value)}`);
  return `{${entries.join(',')}}`;
}

/** Every malformed request the sweep sends to one operation. */
function probesFor(method: string, template: string, operation: Operation, document: Document, ids: Record<string, string>): Probe[] {
  const verb = method.toUpperCase();
  const pathParams = (operation.parameters ?? []).filter((p) => p.in === 'path').map((p) => p.name);
  const queryParams = (operation.parameters ?? []).filter((p) => p.in === 'query').map((p) => p.name);
  const headerParams = (operation.parameters ?? []).filter((p) => p.in === 'header').map((p) => p.name);
  // Ids that name something, so that a bad query or body reaches the route's own code; a DELETE
  // gets none, or its first probe would delete what the others need.
  const known = verb === 'DELETE' ? {} : ids;
  const fill = (values: Record<string, string>): string => template.replace(/\{([^}]+)\}/g, (_all, name: string) => values[name] ?? known[name] ?? SOME_ID);
  const takesBody = verb !== 'GET' && verb !== 'HEAD';
  const emptyBody = takesBody ? { headers: JSON_TYPE, body: '{}' } : {};
  const probes: Probe[] = [];
  for (const name of pathParams) {
    for (const value of BAD_PATH_VALUES) {
      probes.push({ method: verb, path: fill({ [name]: value }), ...emptyBody, what: `path ${name}=${value.slice(0, 20)}` });
    }
  }
  for (const query of badQueries(queryParams)) {
    probes.push({ method: verb, path: `${fill({})}?${query}`, ...emptyBody, what: `query ${query.slice(0, 40)}` });
  }
  const base = sampleBody(operation, document);
  for (const name of headerParams) {
    for (const value of BAD_HEADER_VALUES) {
      const body = takesBody ? { body: JSON.stringify(base) } : {};
      probes.push({ method: verb, path: fill({}), headers: { ...(takesBody ? JSON_TYPE : {}), [name]: value }, ...body, what: `header ${name}=${value.slice(0, 20)}` });
    }
  }
  if (!takesBody) return probes;
  for (const body of BAD_BODIES) probes.push({ method: verb, path: fill({}), headers: body.headers, ...(body.body === undefined ? {} : { body: body.body }), what: `body ${body.what}` });
  for (const field of Object.keys(base)) {
    for (const value of BAD_FIELD_VALUES) {
      probes.push({ method: verb, path: fill({}), headers: JSON_TYPE, body: withField(base, field, value), what: `body ${field}=${value.slice(0, 20)}` });
    }
  }
  return probes;
}

const STACK = [/\bat \S*[\\/]\S+:\d+/, /node_modules/, /\.ts:\d/, /\.js:\d+:\d+/];

const isValidationList = (detail: unknown): boolean =>
  Array.isArray(detail) &&
  detail.length > 0 &&
  detail.every((issue: unknown) => {
    const i = issue as Json;
    return Array.isArray(i.loc) && typeof i.msg === 'string' && typeof i.type === 'string';
  });

/**
 * SPEC.md section 7: a conversation turn whose agent fails is a 500 `Agent error: <text>`. The
 * sweep's model is unreachable, so a turn whose input is acceptable ends there; that 500 is the
 * contract's answer to a failed model, not to the input.
 */
const AGENT_ERROR = { route: 'POST /conversations/{conversation_id}/messages', text: /^\{"detail":"Agent error: [^"]*"\}$/ };

/** What is wrong with an answer, or undefined when it keeps the rule. */
function fault(route: string, answer: Answer): string | undefined {
  const template = route.slice(route.indexOf(' ') + 1);
  if (answer.status === 500 && route === AGENT_ERROR.route && AGENT_ERROR.text.test(answer.text)) return undefined;
  if (answer.status >= 500) return `status ${answer.status}: ${answer.text.slice(0, 200)}`;
  if (STACK.some((pattern) => pattern.test(answer.text))) return 'a stack trace';
  if (answer.status < 400 || answer.contentType.startsWith('text/event-stream')) return undefined;
  if (!answer.contentType.includes('json')) return `a ${answer.status} of type ${answer.contentType || 'none'}`;
  let body: Json;
  try {
    body = JSON.parse(answer.text) as Json;
  } catch {
    return `a ${answer.status} whose body is not JSON`;
  }
  if (template === '/mcp') {
    const error = body.error as Json | undefined;
    if (typeof error?.message === 'string') return undefined;
  }
  if (typeof body.detail === 'string' || isValidationList(body.detail)) return undefined;
  return `a ${answer.status} without a detail`;
}

// Both stores: PostgreSQL refuses text SQLite takes (a NUL byte), so a value reaching the store can fail on one only.
describe.each(DIALECTS)('every route in the OpenAPI document, given malformed input, on %s', (dialect) => {
  let t: TestApp;
  let base: string;
  let document: Document;
  let memberKey: string;
  /** Path parameters that name something of the member's (or the target user). */
  const ids: Record<string, string> = { user_id: TARGET_ID };

  const admin = (method: string, path: string, body?: Json): Promise<Answer> =>
    send(base, { method, path, what: '', ...(body ? { headers: JSON_TYPE, body: JSON.stringify(body) } : {}) }, ROOT_KEY);

  beforeAll(async () => {
    t = await createTestApp({ dialect, env: { API_KEYS: `root:${ROOT_KEY}`, ADMIN_USERS: 'root', RATE_LIMIT_PER_MINUTE: '0' } });
    base = await t.app.listen({ port: 0, host: '127.0.0.1' });
    expect((await admin('POST', '/users', { id: MEMBER_ID })).status).toBe(201);
    const key = await admin('POST', `/users/${MEMBER_ID}/keys`, { name: 'sweep' });
    expect(key.status).toBe(201);
    memberKey = (JSON.parse(key.text) as Json).key as string;
    expect((await admin('POST', '/users', { id: TARGET_ID })).status).toBe(201);
    const member = (method: string, path: string, body: Json): Promise<Json> =>
      send(base, { method, path, headers: JSON_TYPE, body: JSON.stringify(body), what: '' }, memberKey).then((answer) => JSON.parse(answer.text) as Json);
    ids.conversation_id = (await member('POST', '/conversations/', { agent_type: 'task' })).id as string;
    // Its model is unreachable: the run fails at once, and still has an id to revert and cancel.
    ids.run_id = (await member('POST', '/runs', { agent_type: 'task', prompt: 'sweep' })).id as string;
    document = JSON.parse((await admin('GET', '/openapi.json')).text) as Document;
  });
  afterAll(async () => t?.close());

  it('lists the routes this sweep is meant for', () => {
    const operations = Object.values(document.paths).flatMap((item) => Object.keys(item));
    expect(operations.length).toBeGreaterThanOrEqual(40);
    for (const path of ['/users/{user_id}/keys/{key_id}', '/me/webhooks/{webhook_id}/deliveries', '/runs/{run_id}/revert', '/mcp', '/audit', '/session']) {
      expect(document.paths, path).toHaveProperty([path]);
    }
  });

  it('refuses a NUL byte in a query value as it does in a body: 422, on either store', async () => {
    // PostgreSQL cannot hold U+0000 in text; the audit log's actor filter passed it to the store (500).
    const answer = await send(base, { method: 'GET', path: '/audit?actor=ann%00', what: '' }, ROOT_KEY);
    expect([answer.status, JSON.parse(answer.text)]).toEqual([
      422,
      { detail: [{ loc: ['query', 'actor'], msg: 'String should not contain NUL characters (U+0000)', type: 'string_nul' }] },
    ]);
  });

  it('answers each with a 4xx and a detail (never 5xx or a stack trace), as an admin and as a member, and stays healthy', async () => {
    const faults: string[] = [];
    let sent = 0;
    // One kept-alive connection per caller: a new one per request doubled the sweep's time.
    const agents = [new Agent({ keepAlive: true, maxSockets: 1 }), new Agent({ keepAlive: true, maxSockets: 1 })];
    for (const [template, item] of Object.entries(document.paths)) {
      for (const [method, operation] of Object.entries(item)) {
        for (const probe of probesFor(method, template, operation, document, ids)) {
          // The two callers at once: a batch of two keeps the sweep short and the load small.
          const callers = [['admin', ROOT_KEY], ['member', memberKey]] as const;
          const problems = await Promise.all(
            callers.map(async ([who, key], index) => {
              const label = `${probe.method} ${template} ${probe.what} as ${who}`;
              try {
                const problem = fault(`${probe.method} ${template}`, await send(base, probe, key, agents[index]));
                return problem && `${label}: ${problem}`;
              } catch (error) {
                return `${label}: ${error instanceof Error ? error.message : String(error)}`;
              }
            }),
          );
          sent += callers.length;
          faults.push(...problems.filter((problem) => problem !== undefined));
        }
      }
    }
    for (const agent of agents) agent.destroy();
    expect(sent).toBeGreaterThan(1000);
    expect(faults).toEqual([]);
    const health = await send(base, { method: 'GET', path: '/health', what: 'health' }, ROOT_KEY);
    expect(health.status).toBe(200);
  }, 60_000);
});
