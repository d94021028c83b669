import { request as httpRequest } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../support/app.js';

/**
 * SPEC.md section 7 and the project's rule: every route answers malformed input with a 4xx that
 * carries a `detail` (a string, or the 422 validation list), never a 500 and never a stack trace.
 * The routes come from the service's own OpenAPI document, so a route added later is swept
 * without anyone listing it here. Each operation gets the same bounded, deterministic set of bad
 * path parameters, query strings and bodies, once as an admin and once as a plain member.
 *
 * Two kinds of route answer in another shape, as their contract says, and are still held to "no
 * 5xx, no stack trace": `/mcp` speaks JSON-RPC (EXTENSIONS.md: its errors are JSON-RPC error
 * objects, which MCP clients read), and an event stream that opens is read only to its headers
 * (it would otherwise never end).
 */

const ROOT_KEY = 'root-key-3f7a9c1e5d20';
const MEMBER_ID = 'member-sweep';
const SOME_ID = '00000000-0000-4000-8000-000000000000';
/** Per request: an answer that takes longer than this counts as a hang. */
const ANSWER_TIMEOUT_MS = 10_000;

type Json = Record<string, unknown>;
interface Parameter {
  name: string;
  in: string;
}
interface Schema {
  $ref?: string;
  properties?: Record<string, unknown>;
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
function send(base: string, probe: Probe, key: string): Promise<Answer> {
  const url = new URL(base);
  // A length of its own: Node sends a DELETE's body unframed otherwise, which no client does.
  const length = probe.body === undefined ? {} : { 'content-length': String(Buffer.byteLength(probe.body)) };
  const headers: Record<string, string> = { 'x-api-key': key, ...length, ...probe.headers };
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: url.hostname, port: url.port, method: probe.method, path: probe.path, agent: false, headers }, (res) => {
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
const BAD_FIELD_VALUES = ['"a\\u0000b"', '"\\udfff\\ud800"', '1e309', 'null', '[{}]', `"${'x'.repeat(100_000)}"`];

function bodyFields(operation: Operation, document: Document): string[] {
  let schema = operation.requestBody?.content?.['application/json']?.schema;
  for (let hops = 0; schema?.$ref && hops < 5; hops++) {
    schema = document.components?.schemas?.[schema.$ref.replace('#/components/schemas/', '')];
  }
  return Object.keys(schema?.properties ?? {});
}

/** Every malformed request the sweep sends to one operation. */
function probesFor(method: string, template: string, operation: Operation, document: Document): Probe[] {
  const verb = method.toUpperCase();
  const pathParams = (operation.parameters ?? []).filter((p) => p.in === 'path').map((p) => p.name);
  const queryParams = (operation.parameters ?? []).filter((p) => p.in === 'query').map((p) => p.name);
  const fill = (values: Record<string, string>): string => template.replace(/\{([^}]+)\}/g, (_all, name: string) => values[name] ?? SOME_ID);
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
  if (!takesBody) return probes;
  for (const body of BAD_BODIES) probes.push({ method: verb, path: fill({}), headers: body.headers, ...(body.body === undefined ? {} : { body: body.body }), what: `body ${body.what}` });
  for (const field of bodyFields(operation, document)) {
    for (const value of BAD_FIELD_VALUES) {
      probes.push({ method: verb, path: fill({}), headers: JSON_TYPE, body: `{"${field}":${value}}`, what: `body ${field}=${value.slice(0, 20)}` });
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

/** What is wrong with an answer, or undefined when it keeps the rule. */
function fault(template: string, answer: Answer): string | undefined {
  if (answer.status >= 500) return `status ${answer.status}`;
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

describe('every route in the OpenAPI document, given malformed input', () => {
  let t: TestApp;
  let base: string;
  let document: Document;
  let memberKey: string;

  const admin = (method: string, path: string, body?: Json): Promise<Answer> =>
    send(base, { method, path, what: '', ...(body ? { headers: JSON_TYPE, body: JSON.stringify(body) } : {}) }, ROOT_KEY);

  beforeAll(async () => {
    t = await createTestApp({ env: { API_KEYS: `root:${ROOT_KEY}`, ADMIN_USERS: 'root', RATE_LIMIT_PER_MINUTE: '0' } });
    base = await t.app.listen({ port: 0, host: '127.0.0.1' });
    expect((await admin('POST', '/users', { id: MEMBER_ID })).status).toBe(201);
    const key = await admin('POST', `/users/${MEMBER_ID}/keys`, { name: 'sweep' });
    expect(key.status).toBe(201);
    memberKey = (JSON.parse(key.text) as Json).key as string;
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

  it('answers each with a 4xx and a detail (never 5xx or a stack trace), as an admin and as a member, and stays healthy', async () => {
    const faults: string[] = [];
    let sent = 0;
    for (const [template, item] of Object.entries(document.paths)) {
      for (const [method, operation] of Object.entries(item)) {
        for (const probe of probesFor(method, template, operation, document)) {
          // The two callers at once: a batch of two keeps the sweep short and the load small.
          const callers = [['admin', ROOT_KEY], ['member', memberKey]] as const;
          const problems = await Promise.all(
            callers.map(async ([who, key]) => {
              const label = `${probe.method} ${template} ${probe.what} as ${who}`;
              try {
                const problem = fault(template, await send(base, probe, key));
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
    expect(sent).toBeGreaterThan(1000);
    expect(faults).toEqual([]);
    const health = await send(base, { method: 'GET', path: '/health', what: 'health' }, ROOT_KEY);
    expect(health.status).toBe(200);
  }, 120_000);
});
