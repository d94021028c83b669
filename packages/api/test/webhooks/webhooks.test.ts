import { createHmac } from 'node:crypto';
import { scripted, startScriptedModel, type ScriptedModel } from '@mada/testkit';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../support/app.js';
import { createTestDatabase, openSharedDatabase, type TestDatabase } from '../support/databases.js';
import { until } from '../support/until.js';
import { startReceiver, type Receiver } from './receiver.js';

const KEYS = { ann: 'ann-key-0123456789', bob: 'bob-key-0123456789' };
const ENDED = new Set(['succeeded', 'failed', 'cancelled', 'interrupted']);
type Json = Record<string, unknown>;

const sign = (secret: string, body: string): string => `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;

describe('webhooks', () => {
  let model: ScriptedModel;
  let receiver: Receiver;
  let database: TestDatabase | undefined;
  const apps: TestApp[] = [];
  let address: string;

  /** A service on the test's database (a restart is a second boot on the same one). */
  async function boot(env: Record<string, string> = {}, now?: () => Date): Promise<TestApp> {
    database ??= await createTestDatabase('sqlite');
    const t = await createTestApp({
      database: await openSharedDatabase(database),
      model: { url: model.url },
      env: { API_KEYS: `ann:${KEYS.ann},bob:${KEYS.bob}`, ADMIN_USERS: 'ann', RATE_LIMIT_PER_MINUTE: '0', ...env },
      ...(now ? { now } : {}),
    });
    apps.push(t);
    address = await t.app.listen({ port: 0, host: '127.0.0.1' });
    return t;
  }

  async function stop(t: TestApp): Promise<void> {
    apps.splice(apps.indexOf(t), 1);
    await t.close();
  }

  beforeEach(async () => {
    model = await startScriptedModel();
    receiver = await startReceiver();
  });
  afterEach(async () => {
    for (const t of apps.splice(0)) await t.close();
    await database?.drop();
    database = undefined;
    await receiver.close();
    await model.close();
  });

  const as = (user: keyof typeof KEYS) => ({ 'x-api-key': KEYS[user], 'content-type': 'application/json' });
  const call = (method: string, path: string, body?: unknown, user: keyof typeof KEYS = 'ann') =>
    fetch(`${address}${path}`, { method, headers: as(user), ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
  const getJson = async (path: string, user: keyof typeof KEYS = 'ann') => (await (await call('GET', path, undefined, user)).json()) as Json;
  const createHook = async (body: Json, user: keyof typeof KEYS = 'ann'): Promise<Json> => {
    const response = await call('POST', '/me/webhooks', body, user);
    expect(response.status).toBe(201);
    return (await response.json()) as Json;
  };
  const startRun = async (): Promise<string> => {
    const response = await call('POST', '/runs', { agent_type: 'task', prompt: 'do it', working_dir: '.' });
    expect(response.status).toBe(202);
    return ((await response.json()) as { id: string }).id;
  };
  const ended = (id: string) => until(() => getJson(`/runs/${id}`), (run) => ENDED.has(run.status as string), `run ${id} to end`);
  const received = (count: number) => until(async () => receiver.received, (list) => list.length >= count, `${count} deliveries`);
  const deliveries = (hook: Json, ok: (list: Json[]) => boolean) =>
    until(async () => (await getJson(`/me/webhooks/${hook.id as string}/deliveries`)).deliveries as Json[], ok, 'the deliveries');

  it('signs an approval_requested and a run_ended with their details, and shows the secret only once', async () => {
    await boot({ WEBHOOK_ALLOW_PRIVATE: 'true' });
    const hook = await createHook({ url: receiver.url, events: ['approval_requested', 'run_ended'] });
    expect(hook.secret).toMatch(/^whsec_[A-Za-z0-9_-]{43}$/);
    expect(hook).toMatchObject({ url: receiver.url, events: ['approval_requested', 'run_ended'] });
    const listed = await getJson('/me/webhooks');
    expect(listed).toEqual({ webhooks: [{ id: hook.id, url: receiver.url, events: ['approval_requested', 'run_ended'], created_at: hook.created_at }] });
    expect(await getJson(`/me/webhooks/${hook.id as string}`)).not.toHaveProperty('secret');

    model.push(scripted.toolCalls({ name: 'bash', arguments: { command: 'rm nothing.txt' } }), scripted.text('left it'));
    const id = await startRun();
    const [asked] = await received(1);
    const approvals = (await getJson('/approvals?status=pending')).approvals as Json[];
    expect(asked!.headers['content-type']).toBe('application/json');
    expect(asked!.headers['x-mada-event']).toBe('approval_requested');
    expect(asked!.headers['x-mada-signature']).toBe(sign(hook.secret as string, asked!.body));
    expect(JSON.parse(asked!.body)).toEqual({ event: 'approval_requested', at: expect.any(String), run_id: id, approval_id: approvals[0]!.id, tool: 'bash' });

    expect((await call('POST', `/approvals/${approvals[0]!.id as string}`, { decision: 'deny' })).status).toBe(200);
    expect((await ended(id)).status).toBe('succeeded');
    const [, end] = await received(2);
    expect(end!.headers['x-mada-signature']).toBe(sign(hook.secret as string, end!.body));
    expect(JSON.parse(end!.body)).toEqual({ event: 'run_ended', at: expect.any(String), run_id: id, status: 'succeeded' });
    const shown = await deliveries(hook, (list) => list.length === 2 && list.every((d) => d.status === 'delivered'));
    expect(shown.map((d) => [d.event, d.attempts, d.last_status_code])).toEqual([
      ['run_ended', 1, 200],
      ['approval_requested', 1, 200],
    ]);
    // The receiver's body is never shown.
    expect(JSON.stringify(shown)).not.toContain('must never show');

    // A secret of the user's own signs too; the audit log names the host, never the path or the secret.
    const own = await createHook({ url: `${receiver.url}/token-in-path`, events: ['run_ended'], secret: 'my-own-secret-0123456789' });
    expect(own.secret).toBe('my-own-secret-0123456789');
    expect((await call('DELETE', `/me/webhooks/${own.id as string}`)).status).toBe(204);
    const audit = JSON.stringify(await getJson('/audit?limit=1000'));
    expect(audit).toContain('webhook.created');
    expect(audit).toContain('webhook.deleted');
    expect(audit).toContain(`127.0.0.1:${receiver.port}`);
    expect(audit).not.toContain('token-in-path');
    expect(audit).not.toContain('my-own-secret');
  });

  it('retries after a 500 and records the attempts', async () => {
    await boot({ WEBHOOK_ALLOW_PRIVATE: 'true', WEBHOOK_RETRY_BASE_SECONDS: '0.05' });
    const hook = await createHook({ url: receiver.url, events: ['run_ended'], secret: 'retry-secret-0123456789' });
    receiver.answers.push(500);
    model.push(scripted.text('done'));
    const id = await startRun();
    const run = await ended(id);
    const [first, second] = await received(2);
    expect(second!.body).toBe(first!.body);
    expect(second!.headers['x-mada-delivery']).toBe(first!.headers['x-mada-delivery']);
    // The run's final status, whatever it was (this script leaves the task agent short of turns).
    expect(JSON.parse(second!.body)).toMatchObject({ event: 'run_ended', run_id: id, status: run.status });
    const [delivery] = await deliveries(hook, (list) => list[0]?.status === 'delivered');
    expect(delivery).toMatchObject({ id: first!.headers['x-mada-delivery'], attempts: 2, last_status_code: 200, last_error: null, next_attempt_at: null });
  });

  it("sends nothing more for a user once they are disabled, and sends no backlog when they are enabled again", async () => {
    // The retry falls due 2 s after the first attempt: the user is disabled well before.
    await boot({ WEBHOOK_ALLOW_PRIVATE: 'true', WEBHOOK_RETRY_BASE_SECONDS: '2' });
    expect((await call('POST', '/users', { id: 'carol' })).status).toBe(201);
    const carolKey = ((await (await call('POST', '/users/carol/keys', { name: 'laptop' })).json()) as Json).key as string;
    const asCarol = (method: string, path: string, body?: unknown) =>
      fetch(`${address}${path}`, { method, headers: { 'x-api-key': carolKey, 'content-type': 'application/json' }, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
    const hook = (await (await asCarol('POST', '/me/webhooks', { url: receiver.url, events: ['run_ended'] })).json()) as Json;
    receiver.answers.push(500);
    model.push(scripted.text('done'));
    const started = await asCarol('POST', '/runs', { agent_type: 'explore', prompt: 'look', working_dir: '.' });
    expect(started.status).toBe(202);
    await received(1);
    // Disabled while the delivery waits for its retry.
    expect((await call('PATCH', '/users/carol', { disabled: true })).status).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, 3500));
    expect(receiver.received).toHaveLength(1);

    expect((await call('PATCH', '/users/carol', { disabled: false })).status).toBe(200);
    const shown = await until(
      async () => (await asCarol('GET', `/me/webhooks/${hook.id as string}/deliveries`)).json() as Promise<Json>,
      (answer) => Array.isArray(answer.deliveries) && (answer.deliveries as Json[])[0]?.status === 'failed',
      'the delivery to be given up',
    );
    expect((shown.deliveries as Json[])[0]).toMatchObject({ attempts: 2, last_error: 'owner_disabled', next_attempt_at: null });
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(receiver.received).toHaveLength(1);
  });

  it('refuses private, loopback, link-local and metadata URLs without WEBHOOK_ALLOW_PRIVATE, and other schemes and credentials always', async () => {
    await boot();
    const refused = [
      receiver.url,
      `http://localhost:${receiver.port}/`,
      'http://[::1]/',
      'http://169.254.169.254/latest/meta-data/',
      'http://[::ffff:127.0.0.1]/',
      'http://[::ffff:a9fe:a9fe]/',
      'http://0.0.0.0/',
      'http://10.1.2.3/',
      'http://192.168.1.1/',
      'http://[fd00::1]/',
      'http://[fe80::1]/',
      'http://100.64.0.1/',
      'http://2130706433/',
      'http://0177.0.0.1/',
      'http://0x7f.1/',
      'http://[::127.0.0.1]/',
      'http://[::169.254.169.254]/',
    ];
    for (const url of refused) {
      const response = await call('POST', '/me/webhooks', { url, events: ['run_ended'] });
      expect({ url, status: response.status }).toEqual({ url, status: 422 });
      expect(((await response.json()) as Json).detail).toBe('Webhook URL resolves to a loopback, private or link-local address');
    }
    for (const [url, detail] of [
      ['ftp://example.com/', 'Webhook URL must use http or https'],
      ['https://user:pass@example.com/', 'Webhook URL must not carry credentials'],
      ['not a url', 'Webhook URL is not a valid URL'],
    ]) {
      const response = await call('POST', '/me/webhooks', { url, events: ['run_ended'] });
      expect(response.status).toBe(422);
      expect(((await response.json()) as Json).detail).toBe(detail);
    }
    expect((await call('POST', '/me/webhooks', { url: `https://example.com/${'a'.repeat(2100)}`, events: ['run_ended'] })).status).toBe(422);
    expect((await call('POST', '/me/webhooks', { url: 'https://example.com/', events: ['something_else'] })).status).toBe(422);
    expect((await call('POST', '/me/webhooks', { url: 'https://example.com/', events: ['run_ended'], secret: 'short' })).status).toBe(422);
    expect(await getJson('/me/webhooks')).toEqual({ webhooks: [] });
    model.push(scripted.text('done'));
    await ended(await startRun());
    expect(receiver.received).toEqual([]);
  });

  it("checks the address again when sending: a name that resolves to loopback once the setting is off gets nothing", async () => {
    const first = await boot({ WEBHOOK_ALLOW_PRIVATE: 'true' });
    const hook = await createHook({ url: `http://localhost:${receiver.port}/hook`, events: ['run_ended'] });
    await stop(first);
    await boot();
    model.push(scripted.text('done'));
    await ended(await startRun());
    const [delivery] = await deliveries(hook, (list) => (list[0]?.attempts as number) >= 1 && list[0]?.last_error !== null);
    expect(delivery).toMatchObject({ status: 'pending', last_error: 'address_refused', last_status_code: null });
    expect(receiver.received).toEqual([]);
  });

  it("answers 404 for another user's webhook, and caps how many a user has", async () => {
    await boot({ WEBHOOK_ALLOW_PRIVATE: 'true' });
    const hook = await createHook({ url: receiver.url, events: ['run_ended'] });
    for (const [method, path] of [
      ['GET', `/me/webhooks/${hook.id as string}`],
      ['GET', `/me/webhooks/${hook.id as string}/deliveries`],
      ['DELETE', `/me/webhooks/${hook.id as string}`],
      ['GET', '/me/webhooks/not-a-uuid'],
    ] as const) {
      const response = await call(method, path, undefined, 'bob');
      expect(response.status).toBe(404);
      expect(await response.json()).toEqual({ detail: 'Webhook not found' });
    }
    expect(await getJson('/me/webhooks', 'bob')).toEqual({ webhooks: [] });
    expect(((await getJson('/me/webhooks')).webhooks as Json[]).length).toBe(1);
    for (let i = 1; i < 20; i++) await createHook({ url: `${receiver.url}/${i}`, events: ['run_ended'] });
    const over = await call('POST', '/me/webhooks', { url: receiver.url, events: ['run_ended'] });
    expect(over.status).toBe(409);
    expect(await over.json()).toEqual({ detail: 'Webhook limit reached (20): delete one first' });
    // Bob's own count is his.
    await createHook({ url: receiver.url, events: ['run_ended'] }, 'bob');
  });

  it('sends a delivery left pending by a stopped service after the restart, once', async () => {
    const first = await boot({ WEBHOOK_ALLOW_PRIVATE: 'true', WEBHOOK_RETRY_BASE_SECONDS: '3600' });
    const hook = await createHook({ url: receiver.url, events: ['run_ended'] });
    receiver.answers.push(500);
    model.push(scripted.text('done'));
    const id = await startRun();
    const run = await ended(id);
    await received(1);
    await deliveries(hook, (list) => list[0]?.last_status_code === 500);
    await stop(first);
    // The retry is an hour away: the restarted service's clock is two hours on.
    const later = () => new Date(Date.now() + 2 * 3_600_000);
    await boot({ WEBHOOK_ALLOW_PRIVATE: 'true', WEBHOOK_RETRY_BASE_SECONDS: '3600' }, later);
    const [delivery] = await deliveries(hook, (list) => list[0]?.status === 'delivered');
    expect(delivery).toMatchObject({ attempts: 2, last_status_code: 200 });
    expect(receiver.received).toHaveLength(2);
    expect(JSON.parse(receiver.received[1]!.body)).toMatchObject({ event: 'run_ended', run_id: id, status: run.status });
  });
});
