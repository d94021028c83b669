import { randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { join } from 'node:path';
import { scripted, startScriptedModel, type ScriptedModel } from '@mada/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../support/app.js';
import { DIALECTS } from '../support/databases.js';
import { send, type RawResponse } from '../support/raw-http.js';
import { registeredRoutes, type RouteKey } from '../support/routes.js';
import { until } from '../support/until.js';

/**
 * One user never sees, follows, changes, cancels, approves, reverts or learns more than the
 * contract says about another user's conversations, runs, events, approvals or checkpoints
 * (EXTENSIONS.md sections 2-4, SPEC.md: 404 `... not found` for what does not exist, 403
 * `Not authorized` for what is someone else's). Ann owns everything; Bob attacks.
 */

const USERS = { ann: 'user-ann-5f1c', bob: 'user-bob-93d2' } as const;
const KEYS = { ann: 'ann-key-4a8e0c2f9b7d', bob: 'bob-key-7c1d3e5a2f60' } as const;
const METRICS_TOKEN = 'metrics-token-0b9e6d';
type User = keyof typeof KEYS;
/** Appears in everything Ann writes: a response to Bob that contains it has leaked her data. */
const SECRET = 'ann-secret-8d4f';
/** Ann works here; Bob in the start directory (and, for approve_always, here too). */
const ANN_DIR = `${SECRET}-dir`;
const ENDED = new Set(['succeeded', 'failed', 'cancelled', 'interrupted']);
type Json = Record<string, unknown>;

type Kind = 'conversation' | 'run' | 'approval';
const NOT_FOUND: Record<Kind, string> = { conversation: 'Conversation not found', run: 'Run not found', approval: 'Approval not found' };

/**
 * What every route is, for this test. A route missing here fails the test: whoever adds one
 * decides whether it touches a user's resource, and this test then attacks it.
 */
type Classification =
  | { is: 'public' }
  | { is: 'catalogue' }
  | { is: 'creates' }
  | { is: 'lists' }
  /** The caller's own account (`/me*`): nothing of anyone else's by construction. */
  | { is: 'account' }
  /** The browser console's files, sign-in and sign-out: nobody's data (console-session.test.ts). */
  | { is: 'console' }
  /** Admins only: Bob, a member, gets 403 `Admin only`. */
  | { is: 'admin'; body?: Json }
  | { is: 'owned'; kind: Kind; param: string; body?: Json };

const CONVERSATION = { is: 'owned', kind: 'conversation', param: ':conversation_id' } as const;
const RUN = { is: 'owned', kind: 'run', param: ':run_id' } as const;
const TURN = { ...CONVERSATION, body: { content: `bob writes into ${SECRET}` } };

const ROUTES: Record<RouteKey, Classification> = {
  'GET /': { is: 'public' },
  'OPTIONS *': { is: 'public' },
  'GET /health': { is: 'public' },
  'GET /metrics': { is: 'public' },
  'GET /openapi.json': { is: 'public' },
  'GET /docs': { is: 'public' },
  'GET /docs/': { is: 'public' },
  'GET /docs/*': { is: 'public' },
  'GET /docs/json': { is: 'public' },
  'GET /docs/yaml': { is: 'public' },
  'GET /docs/static/index.html': { is: 'public' },
  'GET /docs/static/swagger-initializer.js': { is: 'public' },
  'GET /app': { is: 'console' },
  'GET /app*': { is: 'console' },
  'POST /session': { is: 'console' },
  'DELETE /session': { is: 'console' },
  'GET /agents/': { is: 'catalogue' },
  'GET /agents/:agent_type': { is: 'catalogue' },
  'GET /models': { is: 'catalogue' },
  'POST /agents/run': { is: 'creates' },
  'POST /agents/stream': { is: 'creates' },
  'POST /runs': { is: 'creates' },
  'POST /conversations/': { is: 'creates' },
  'GET /runs': { is: 'lists' },
  'GET /approvals': { is: 'lists' },
  // A stream of the caller's own pending approvals (approval-stream.test.ts shows Bob none of Ann's).
  'GET /approvals/events': { is: 'account' },
  'GET /conversations/': { is: 'lists' },
  'GET /conversations/:conversation_id': CONVERSATION,
  'DELETE /conversations/:conversation_id': CONVERSATION,
  'GET /conversations/:conversation_id/messages': CONVERSATION,
  'POST /conversations/:conversation_id/messages': TURN,
  'POST /conversations/:conversation_id/stream': TURN,
  'POST /conversations/:conversation_id/runs': TURN,
  'POST /conversations/:conversation_id/save': { ...CONVERSATION, body: { user_content: 'bob', assistant_content: 'bob' } },
  'GET /runs/:run_id': RUN,
  'GET /runs/:run_id/events': RUN,
  'GET /runs/:run_id/changes': RUN,
  'POST /runs/:run_id/cancel': RUN,
  'POST /runs/:run_id/revert': { ...RUN, body: { force: true } },
  'POST /approvals/:approval_id': { is: 'owned', kind: 'approval', param: ':approval_id', body: { decision: 'approve_always', message: 'bob says yes' } },
  'GET /me': { is: 'account' },
  'GET /me/keys': { is: 'account' },
  'POST /me/keys': { is: 'account' },
  'DELETE /me/keys/:key_id': { is: 'account' },
  // The caller's own webhooks: another user's id is 404 `Webhook not found`, as for a key (webhooks.test.ts).
  'GET /me/webhooks': { is: 'account' },
  'POST /me/webhooks': { is: 'account' },
  'GET /me/webhooks/:webhook_id': { is: 'account' },
  'DELETE /me/webhooks/:webhook_id': { is: 'account' },
  'GET /me/webhooks/:webhook_id/deliveries': { is: 'account' },
  'GET /users': { is: 'admin' },
  'POST /users': { is: 'admin', body: { id: 'bob-made-this' } },
  'GET /users/:user_id': { is: 'admin' },
  'PATCH /users/:user_id': { is: 'admin', body: { role: 'admin' } },
  'POST /users/:user_id/keys': { is: 'admin', body: { name: 'bob has it' } },
  'DELETE /users/:user_id/keys/:key_id': { is: 'admin' },
  'GET /audit': { is: 'admin' },
  'GET /audit/verify': { is: 'admin' },
  // mada as an MCP server: a session is its creator's alone (mcp/server.test.ts: Bob gets 404 on Ann's).
  'POST /mcp': { is: 'creates' },
  'GET /mcp': { is: 'account' },
  'DELETE /mcp': { is: 'account' },
};

/** HEAD runs the GET handler: it is attacked as its GET is. */
const classify = (route: RouteKey): Classification | undefined => ROUTES[route.replace(/^HEAD /, 'GET ') as RouteKey];

/** What Ann made, through the API, before Bob starts. */
interface Ann {
  conversation: string;
  messages: string[];
  /** A conversation turn (stored with an Idempotency-Key). */
  turn: string;
  /** An ended run that wrote a file: it has a checkpoint to show and revert. */
  done: string;
  /** A run paused on an approval. */
  waiting: string;
  approval: string;
  /** Every id above, for the leak checks. */
  ids: string[];
}

describe.each(DIALECTS)('isolation between users on %s', (dialect) => {
  let model: ScriptedModel;
  let t: TestApp;
  let address: string;
  let ann: Ann;
  let bobRun: string;
  let bobConversation: string;

  const headers = (user: User | undefined, extra: Record<string, string> = {}): Record<string, string> => ({
    ...(user ? { 'x-api-key': KEYS[user] } : {}),
    ...extra,
  });
  const call = (user: User | undefined, method: string, path: string, body?: Json, extra: Record<string, string> = {}): Promise<RawResponse> =>
    send(address, { method, path, headers: headers(user, { host: 'localhost', ...extra }), ...(body === undefined ? {} : { body }) });
  const json = async (user: User, method: string, path: string, body?: Json, extra?: Record<string, string>): Promise<Json> => {
    const response = await call(user, method, path, body, extra);
    expect(response.status, `${method} ${path}: ${response.text}`).toBeLessThan(300);
    return response.json() as Json;
  };
  const ended = (user: User, id: string) => until(() => json(user, 'GET', `/runs/${id}`), (run) => ENDED.has(run.status as string), `run ${id} to end`);
  const bash = (command: string) => scripted.toolCalls({ name: 'bash', arguments: { command } });

  async function createAnnsResources(): Promise<Ann> {
    mkdirSync(annDir());
    writeFileSync(annDir('victim.txt'), 'ann keeps this');
    const conversation = (await json('ann', 'POST', '/conversations/', { agent_type: 'task', working_dir: annDir(), title: `${SECRET} title` })).id as string;
    const saved = await json('ann', 'POST', `/conversations/${conversation}/save`, { user_content: `${SECRET} asks`, assistant_content: `${SECRET} answers` });
    model.push(scripted.text(`${SECRET} turn answer`));
    const turn = (await json('ann', 'POST', `/conversations/${conversation}/runs`, { content: `${SECRET} turn` }, { 'idempotency-key': 'ann-turn-key' })).id as string;
    await ended('ann', turn);
    model.push(scripted.toolCalls({ name: 'write_file', arguments: { file_path: annDir('created.txt'), content: `${SECRET}\n` } }), scripted.text('wrote it'));
    const done = (await json('ann', 'POST', '/runs', RUN_BODY, { 'idempotency-key': 'ann-run-key' })).id as string;
    expect((await ended('ann', done)).status).toBe('succeeded');
    // Its answer after the approval is scripted when it is approved: the model answers in request order.
    model.push(bash('rm victim.txt'));
    const waiting = (await json('ann', 'POST', '/runs', { agent_type: 'task', prompt: `${SECRET} remove the victim`, working_dir: ANN_DIR })).id as string;
    const pending = await until(() => json('ann', 'GET', '/approvals?status=pending'), (list) => list.total === 1, "Ann's approval");
    const approval = ((pending.approvals as Json[])[0]!.id as string);
    const messages = [(saved.user_message as Json).id as string, (saved.assistant_message as Json).id as string];
    return { conversation, messages, turn, done, waiting, approval, ids: [conversation, ...messages, turn, done, waiting, approval] };
  }

  /** Bob has things of his own, so an empty list proves nothing. */
  async function createBobsResources(): Promise<void> {
    bobConversation = (await json('bob', 'POST', '/conversations/', { agent_type: 'task', working_dir: t.workdir })).id as string;
    model.push(scripted.text('bob answer'));
    bobRun = (await json('bob', 'POST', '/runs', { agent_type: 'task', prompt: 'bob asks', working_dir: '.' })).id as string;
    await ended('bob', bobRun);
  }

  /** Everything of Ann's that Bob could change, as Ann reads it. */
  async function annsState(): Promise<Json> {
    const runs = await Promise.all([ann.turn, ann.done, ann.waiting].map((id) => json('ann', 'GET', `/runs/${id}`)));
    return {
      runs,
      conversation: await json('ann', 'GET', `/conversations/${ann.conversation}`),
      conversations: await json('ann', 'GET', '/conversations/'),
      approvals: await json('ann', 'GET', '/approvals'),
      changes: await json('ann', 'GET', `/runs/${ann.done}/changes`),
      files: ['victim.txt', 'created.txt'].map((name) => existsSync(annDir(name)) && readFileSync(annDir(name), 'utf8')),
    };
  }

  /** Nothing of Ann's in what Bob got: no id, no prompt or message text, no path, no tool args. */
  function expectNothingOfAnns(response: RawResponse, what: string): void {
    const seen = `${JSON.stringify(response.headers)}\n${response.text}`.toLowerCase();
    for (const needle of [SECRET, 'victim.txt', USERS.ann, KEYS.ann, ...ann.ids]) {
      expect(seen, `${what} shows ${needle}`).not.toContain(needle.toLowerCase());
    }
  }

  const RUN_BODY = { agent_type: 'task', prompt: `${SECRET} write a file`, working_dir: ANN_DIR, mode: 'auto_accept' };
  const annDir = (...names: string[]): string => join(t.workdir, ANN_DIR, ...names);

  beforeAll(async () => {
    model = await startScriptedModel();
    t = await createTestApp({
      dialect,
      model: { url: model.url },
      env: {
        API_KEYS: `${USERS.ann}:${KEYS.ann},${USERS.bob}:${KEYS.bob}`,
        METRICS_TOKEN,
        RATE_LIMIT_PER_MINUTE: '0',
        // Registers the preflight route too, so that the route list is the longest there is.
        CORS_ORIGINS: 'http://client.example',
      },
    });
    address = await t.app.listen({ port: 0, host: '127.0.0.1' });
    ann = await createAnnsResources();
    await createBobsResources();
  });
  afterAll(async () => {
    await t?.close();
    await model?.close();
  });

  it('knows what every registered route is', () => {
    const routes = registeredRoutes(t.app);
    expect(routes.filter((route) => classify(route) === undefined), 'routes this test does not classify').toEqual([]);
    const registered = new Set(routes);
    expect(Object.keys(ROUTES).filter((route) => !registered.has(route as RouteKey)), 'classified routes that no longer exist').toEqual([]);
  });

  /** The routes that take an id of a user's resource, HEAD included. */
  const ownedRoutes = (): { route: RouteKey; owned: Extract<Classification, { is: 'owned' }> }[] =>
    registeredRoutes(t.app).flatMap((route) => {
      const found = classify(route);
      return found?.is === 'owned' ? [{ route, owned: found }] : [];
    });

  const target = (route: RouteKey, param: string, id: string): { method: string; path: string } => {
    const [method, pattern] = route.split(' ') as [string, string];
    return { method, path: pattern.replace(param, id) };
  };

  /** Ann's resources of each kind, and ids of Ann's other kinds of resource (which must be unknown there). */
  const annsIds = (kind: Kind): { own: string[]; others: string[] } => {
    if (kind === 'conversation') return { own: [ann.conversation], others: [ann.turn, ann.approval, ann.messages[0]!] };
    // Running (paused on its approval), ended with a checkpoint, and a conversation's turn.
    if (kind === 'run') return { own: [ann.waiting, ann.done, ann.turn], others: [ann.conversation, ann.approval, ann.messages[1]!] };
    return { own: [ann.approval], others: [ann.waiting, ann.conversation] };
  };

  /** Ids that name nothing (encoded for the path): each must answer as a random id does. */
  const unknownIds = (id: string): string[] => [
    randomUUID(),
    encodeURIComponent(` ${id}`),
    encodeURIComponent(`${id} `),
    encodeURIComponent(`${id}\n`),
    encodeURIComponent(`${id}\t`),
    `${id}%00`,
    encodeURIComponent(`{${id}}`),
    id.replaceAll('-', ''),
    `${id}0`,
    id.slice(0, -1),
    'x'.repeat(8000),
    `${id.slice(0, 8)}${'-0'.repeat(3000)}`,
    '..',
    '%2e%2e',
    encodeURIComponent(`${id}/`),
    encodeURIComponent(`../${id}`),
  ];

  const bodyOf = (owned: Extract<Classification, { is: 'owned' }>): Json | undefined => owned.body;

  it("shows nothing of Ann's on the routes that belong to nobody", async () => {
    const open = registeredRoutes(t.app).filter((route) => ['public', 'catalogue'].includes(classify(route)?.is ?? ''));
    for (const route of open) {
      const [method, pattern] = route.split(' ') as [string, string];
      const path = pattern.replace(':agent_type', 'task').replace(/^\*$/, '/runs').replace('*', 'static/index.css');
      const preflight: Record<string, string> = method === 'OPTIONS' ? { origin: 'http://client.example', 'access-control-request-method': 'GET' } : {};
      // The agent catalogue wants a key (a 401 would only count toward the failure limit).
      for (const user of classify(route)?.is === 'public' ? (['bob', undefined] as const) : (['bob'] as const)) {
        const response = await call(user, method, path, undefined, { authorization: `Bearer ${METRICS_TOKEN}`, ...preflight });
        expect(response.status, `${route}: ${response.text.slice(0, 200)}`).toBeLessThan(400);
        expectNothingOfAnns(response, route);
      }
    }
  });

  it("answers Bob 403 `Not authorized` on every route that takes Ann's id, 404 for ids that name nothing, and changes nothing of Ann's", async () => {
    const before = await annsState();
    const routes = ownedRoutes();
    expect(routes.length).toBeGreaterThanOrEqual(13);
    for (const { route, owned } of routes) {
      const { own, others } = annsIds(owned.kind);
      const isHead = route.startsWith('HEAD ');
      const forbidden: RawResponse[] = [];
      const spellings = own.flatMap((id) => [id, id.toUpperCase(), id.replace(/[a-f]/g, (c) => `%${c.charCodeAt(0).toString(16)}`)]);
      for (const id of spellings) {
        const { method, path } = target(route, owned.param, id);
        const response = await call('bob', method, path, bodyOf(owned), { accept: 'text/event-stream, application/json' });
        expect(response.status, `${route} with Ann's id ${id}: ${response.text}`).toBe(403);
        if (!isHead) expect(response.json()).toEqual({ detail: 'Not authorized' });
        expectNothingOfAnns(response, `${route} with Ann's id`);
        forbidden.push(response);
      }
      for (const id of [...others, ...unknownIds(own[0]!)]) {
        const { method, path } = target(route, owned.param, id);
        const response = await call('bob', method, path, bodyOf(owned));
        expect(response.status, `${route} with ${id.slice(0, 60)}: ${response.text.slice(0, 200)}`).toBe(404);
        if (!isHead) expect(response.json()).toEqual({ detail: NOT_FOUND[owned.kind] });
        expectNothingOfAnns(response, `${route} with an unknown id`);
        // Ann's id and an unknown one differ in status and detail (the contract asks for that), nothing else.
        expect(Object.keys(response.headers).sort(), `${route}: headers of 403 and 404`).toEqual(Object.keys(forbidden[0]!.headers).sort());
      }
      if (!isHead) {
        const { method, path } = target(route, owned.param, own[0]!);
        const anonymous = await call(undefined, method, path, bodyOf(owned));
        expect(anonymous.status, `${route} without a key`).toBe(401);
      }
    }
    expect(await annsState()).toEqual(before);
  });

  it('answers Bob 403 `Admin only` on every admin route, about Ann or anyone', async () => {
    const admin = registeredRoutes(t.app).filter((route) => classify(route)?.is === 'admin');
    expect(admin.length).toBeGreaterThanOrEqual(6);
    for (const route of admin) {
      const found = classify(route) as Extract<Classification, { is: 'admin' }>;
      const [method, pattern] = route.split(' ') as [string, string];
      for (const user of [USERS.ann, USERS.bob, 'nobody']) {
        const path = pattern.replace(':user_id', user).replace(':key_id', randomUUID());
        const response = await call('bob', method, path, found.body);
        expect(response.status, `${route} about ${user}`).toBe(403);
        if (method !== 'HEAD') expect(response.json()).toEqual({ detail: 'Admin only' });
        expectNothingOfAnns(response, route);
      }
    }
    expect((await json('bob', 'GET', '/me')).role).toBe('member');
  });

  /** Paths that a lax router could map onto a route with Ann's id, or out of the docs' static directory. */
  const trickPaths = (run: string, conversation: string): string[] => [
    `//runs/${run}`,
    `/runs//${run}`,
    `/runs/${run}/`,
    `/runs/${run}//events`,
    `/RUNS/${run}`,
    `/%72uns/${run}`,
    `/runs/./${run}`,
    `/runs/x/../${run}`,
    `/runs/%2e%2e/runs/${run}`,
    `/runs/${run}/events/..`,
    `/runs/${run}%2fevents`,
    `/runs/${run}%2Fcancel`,
    `/runs/${run};events`,
    `/runs/${run}?run_id=${randomUUID()}`,
    `/runs/${randomUUID()}/..%2f${run}`,
    `/conversations//${conversation}`,
    `/conversations/${conversation}//messages`,
    `/conversations/%2e%2e/conversations/${conversation}`,
    `/agents/../runs/${run}`,
    `/health/../runs/${run}`,
    `/docs/../runs/${run}`,
    `/docs/%2e%2e/runs/${run}`,
    `/docs/static/..%2f..%2f..%2frun%2f${run}`,
    // Past the 16 KiB request line: the server's own 414.
    `/runs/${run}/${'a'.repeat(20_000)}`,
    `/runs/${run}?${'a'.repeat(20_000)}`,
  ];

  it('serves nothing from outside the docs directory', async () => {
    for (const path of ['/docs/static/..%2f..%2f..%2fpackage.json', '/docs/static/%2e%2e/%2e%2e/%2e%2e/%2e%2e/etc/passwd', '/docs/..%2f..%2f..%2f..%2fetc%2fpasswd', '/docs/static/....//....//package.json']) {
      const response = await call(undefined, 'GET', path);
      expect(response.text, path).not.toMatch(/root:|"name": ?"(mada|@fastify)|"dependencies"/);
    }
  });

  it('tells caches never to store what a key reads: the key is a header no shared cache keys on', async () => {
    const reads = ['/runs', '/approvals', '/conversations/', `/runs/${ann.done}`, `/runs/${ann.done}/changes`, `/conversations/${ann.conversation}`, `/conversations/${ann.conversation}/messages`];
    for (const path of reads) {
      for (const user of ['ann', 'bob'] as const) {
        const response = await call(user, 'GET', path);
        expect(response.status, `${user} ${path}`).toBeLessThan(500);
        expect(response.headers['cache-control'], `${user} ${path}`).toBe('no-store');
      }
    }
    const events = await call('ann', 'GET', `/runs/${ann.done}/events`, undefined, { accept: 'text/event-stream' });
    expect(events.headers['cache-control']).toMatch(/no-store|no-cache/);
  });

  it("never lists Ann's conversations, runs or approvals for Bob, whatever the filter or page", async () => {
    const lists = ['/conversations/', '/conversations/?limit=100&offset=0', '/runs', '/runs?limit=100', '/approvals', '/approvals?status=pending', '/approvals?status=approved'];
    const statuses = ['queued', 'running', 'waiting_approval', 'succeeded', 'failed', 'cancelled', 'interrupted'];
    for (const path of [...lists, ...statuses.map((status) => `/runs?status=${status}`)]) {
      const response = await call('bob', 'GET', path);
      expect(response.status, path).toBe(200);
      expectNothingOfAnns(response, `Bob's ${path}`);
    }
    expect(((await json('bob', 'GET', '/runs')).runs as Json[]).map((run) => run.id)).toEqual([bobRun]);
    expect(((await json('bob', 'GET', '/conversations/')).conversations as Json[]).map((c) => c.id)).toEqual([bobConversation]);
    expect(await json('bob', 'GET', '/approvals')).toEqual({ approvals: [], total: 0 });
  });

  it("never streams Ann's run events to Bob, from any position", async () => {
    const positions: Record<string, string>[] = [{}, { 'last-event-id': '0' }, { 'last-event-id': '1' }, { 'last-event-id': '999999' }, { 'last-event-id': '-1' }];
    const queries = ['', '?after=0', '?after=1', '?after=3', '?after=999999'];
    for (const run of [ann.waiting, ann.done, ann.turn]) {
      for (const extra of positions) {
        for (const query of queries) {
          const response = await call('bob', 'GET', `/runs/${run}/events${query}`, undefined, { accept: 'text/event-stream', ...extra });
          // -1 is no event id: 422 for everyone, before anything is looked up.
          expect(response.status, `${query} ${JSON.stringify(extra)}: ${response.text}`).toBe(extra['last-event-id'] === '-1' ? 422 : 403);
          expect(response.headers['content-type']).toMatch(/^application\/json/);
          expectNothingOfAnns(response, `events of Ann's run ${query}`);
        }
      }
    }
  });

  it("never answers Bob with Ann's run for her Idempotency-Key, nor tells him she used it", async () => {
    const annsBody = { ...RUN_BODY, prompt: `${SECRET} once more` };
    model.push(scripted.text('ann again'), scripted.text('bob one'), scripted.text('bob two'), scripted.text('bob three'));
    const annsRun = (await json('ann', 'POST', '/runs', annsBody, { 'idempotency-key': 'ann-third-key' })).id as string;
    await ended('ann', annsRun);
    // Her key, her body, her conversation: still only a 403, never her run.
    const replay = await call('bob', 'POST', `/conversations/${ann.conversation}/runs`, { content: `${SECRET} turn` }, { 'idempotency-key': 'ann-turn-key' });
    expect(replay.status).toBe(403);
    expectNothingOfAnns(replay, 'a replay of her turn');
    // Her key with her very body; her key with another body (a 422 would tell him she used it).
    const same = await call('bob', 'POST', '/runs', annsBody, { 'idempotency-key': 'ann-third-key' });
    const other = await call('bob', 'POST', '/runs', { ...RUN_BODY, prompt: 'something else' }, { 'idempotency-key': 'ann-run-key' });
    const turn = await call('bob', 'POST', `/conversations/${bobConversation}/runs`, { content: `${SECRET} turn` }, { 'idempotency-key': 'ann-turn-key' });
    for (const response of [same, other, turn]) {
      expect(response.status, response.text).toBe(202);
      const id = (response.json() as Json).id as string;
      expect([...ann.ids, annsRun]).not.toContain(id);
      await ended('bob', id);
    }
    // Her own retries still find her runs.
    expect((await json('ann', 'POST', '/runs', RUN_BODY, { 'idempotency-key': 'ann-run-key' })).id).toBe(ann.done);
    expect((await json('ann', 'POST', '/runs', annsBody, { 'idempotency-key': 'ann-third-key' })).id).toBe(annsRun);
  });

  it("takes no owner, id or conversation from a body: Bob naming Ann's gets things of his own", async () => {
    const claims = { id: ann.done, user_id: USERS.ann, userId: USERS.ann, conversation_id: ann.conversation, run_id: ann.waiting };
    model.push(scripted.text('bob claims'), scripted.text('bob turn'));
    const run = await json('bob', 'POST', '/runs', { agent_type: 'task', prompt: 'bob claims', working_dir: '.', ...claims });
    expect(ann.ids).not.toContain(run.id);
    expect(run.conversation_id).toBeNull();
    await ended('bob', run.id as string);
    const conversation = await json('bob', 'POST', '/conversations/', { agent_type: 'task', ...claims });
    expect(ann.ids).not.toContain(conversation.id);
    const turn = await json('bob', 'POST', `/conversations/${conversation.id as string}/runs`, { content: 'bob turn', ...claims });
    expect(turn.conversation_id).toBe(conversation.id);
    await ended('bob', turn.id as string);
  });

  it("answers Bob's page request naming Ann's message as it answers a made-up one", async () => {
    const path = (before: string) => `/conversations/${bobConversation}/messages?before=${before}`;
    const hers = await call('bob', 'GET', path(ann.messages[0]!));
    const madeUp = await call('bob', 'GET', path(randomUUID()));
    expect(hers.status).toBe(422);
    expect(hers.text).toBe(madeUp.text);
  });

  it('never lets two keys in one request act as Ann', async () => {
    const both = await new Promise<number>((resolve, reject) => {
      const url = new URL(address);
      const req = httpRequest({ host: url.hostname, port: url.port, path: `/runs/${ann.done}`, headers: { host: 'localhost', 'x-api-key': [KEYS.bob, KEYS.ann] } }, (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      });
      req.on('error', reject);
      req.end();
    });
    expect(both).toBe(401);
  });

  it("keeps the runs of the legacy routes apart: Bob's X-Run-Id is his, and Ann cannot read it", async () => {
    model.push(scripted.text('bob blocking'), scripted.text('bob streamed'));
    const blocking = await call('bob', 'POST', '/agents/run', { agent_type: 'task', prompt: 'bob blocking', working_dir: '.' });
    const streamed = await call('bob', 'POST', '/agents/stream', { agent_type: 'task', prompt: 'bob streamed', working_dir: '.' });
    for (const response of [blocking, streamed]) {
      expect(response.status).toBe(200);
      const id = response.headers['x-run-id'] as string;
      expect(ann.ids).not.toContain(id);
      expect((await json('bob', 'GET', `/runs/${id}`)).prompt).toMatch(/^bob /);
      expect((await call('ann', 'GET', `/runs/${id}`)).status).toBe(403);
    }
  });

  it('shows no id, user, key or text in /metrics', async () => {
    const response = await call(undefined, 'GET', '/metrics', undefined, { authorization: `Bearer ${METRICS_TOKEN}` });
    expect(response.status).toBe(200);
    expect(response.text).toContain('mada_http_requests_total');
    expectNothingOfAnns(response, '/metrics');
    for (const needle of [USERS.bob, KEYS.bob, bobRun, bobConversation, 'bob ']) expect(response.text).not.toContain(needle);
    expect(response.text).not.toMatch(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/i);
    // A user's key is no metrics credential.
    expect((await call('bob', 'GET', '/metrics')).status).toBe(401);
  });

  it("does not apply Ann's approve_always to Bob's runs in the same working directory", async () => {
    writeFileSync(annDir('bobs.txt'), 'bob keeps this');
    model.push(scripted.text('ann removed it'));
    expect((await call('ann', 'POST', `/approvals/${ann.approval}`, { decision: 'approve_always' })).status).toBe(200);
    expect((await ended('ann', ann.waiting)).status).toBe('succeeded');
    // What the approved rm answered, so that a failure here says why the file is still there.
    expect(model.requests.at(-1)?.messages.filter((m) => m.role === 'tool').at(-1)?.content).toBe('(no output)');
    expect(existsSync(annDir('victim.txt'))).toBe(false);

    model.push(bash('rm bobs.txt'), scripted.text('bob gave up'));
    const run = (await json('bob', 'POST', '/runs', { agent_type: 'task', prompt: 'bob removes', working_dir: ANN_DIR })).id as string;
    const pending = await until(() => json('bob', 'GET', '/approvals?status=pending'), (list) => list.total === 1, "Bob's approval");
    const approval = (pending.approvals as Json[])[0]!;
    expect(approval).toMatchObject({ run_id: run, args: { command: 'rm bobs.txt' } });
    expect(existsSync(annDir('bobs.txt'))).toBe(true);
    // Ann cannot answer it either.
    expect((await call('ann', 'POST', `/approvals/${approval.id as string}`, { decision: 'approve' })).status).toBe(403);
    expect((await call('bob', 'POST', `/approvals/${approval.id as string}`, { decision: 'deny' })).status).toBe(200);
    expect((await ended('bob', run)).status).toBe('succeeded');
    expect(existsSync(annDir('bobs.txt'))).toBe(true);
  });

  it("lets no path trick reach Ann's run or conversation, with Bob's key or none", async () => {
    for (const path of trickPaths(ann.waiting, ann.conversation)) {
      for (const method of ['GET', 'POST', 'DELETE']) {
        // Every 401 counts toward the loopback's 30 failed authentications a minute: few, and last.
        for (const user of method === 'GET' ? (['bob', undefined] as const) : (['bob'] as const)) {
          const response = await call(user, method, path, method === 'POST' ? {} : undefined);
          expect([400, 401, 403, 404, 414, 422], `${method} ${path.slice(0, 120)} as ${user ?? 'nobody'}: ${response.status} ${response.text.slice(0, 200)}`).toContain(response.status);
          expectNothingOfAnns(response, `${method} ${path}`);
        }
      }
    }
  });
});
