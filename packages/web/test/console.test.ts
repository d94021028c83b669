import { randomUUID } from 'node:crypto';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { scripted, startScriptedModel, type ScriptedModel } from '@mada/testkit';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../api/test/support/app.js';
import { createTestDatabase, type TestDatabase } from '../../api/test/support/databases.js';
import { until } from '../../api/test/support/until.js';
import { phonePage, PHONE, seriousViolations, signedInPage, startConsoleService, type ConsoleService } from './browser.js';

/**
 * The console in a real browser (the system's headless Chromium) against the real service on
 * loopback and the scripted model: sign in with a stored key, see a run's approval arrive in the
 * Inbox at phone size, approve it, and the run does what it asked; follow a run on its page
 * across a reload and cancel it; an approval answered elsewhere leaves the Inbox at once; the
 * session outlives a restart of the service.
 */

/** Records the browser notifications the page makes (allowed beforehand), for the test to read. */
const RECORD_NOTIFICATIONS = `
  window.__notified = [];
  const Native = window.Notification;
  window.Notification = class extends Native {
    constructor(title, options) {
      super(title, options);
      window.__notified.push(title + ' | ' + (options && options.body));
    }
  };
`;

const ADMIN_KEY = 'root-key-7f3a9c20e4b1';

describe('the console in a browser', () => {
  let service: ConsoleService;
  let model: ScriptedModel;
  let t: TestApp;
  let address: string;
  let consoleDir: string;
  let browser: Browser;

  const api = async (method: string, path: string, body?: unknown, key = ADMIN_KEY): Promise<Record<string, unknown>> => {
    const response = await fetch(`${address}${path}`, {
      method,
      headers: { 'x-api-key': key, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return (await response.json()) as Record<string, unknown>;
  };

  /** A request as root, with the key, to the service at `here`. */
  const call = async (here: string, path: string, body?: unknown): Promise<Record<string, unknown>> => {
    const response = await fetch(`${here}${path}`, {
      method: body === undefined ? 'GET' : 'POST',
      headers: { 'x-api-key': ADMIN_KEY, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return (await response.json()) as Record<string, unknown>;
  };

  /** A fresh stored user (vitest retries a test once), signed in on a new phone-size page. */
  async function signedIn(): Promise<Awaited<ReturnType<typeof phonePage>> & { key: string }> {
    const user = `alice-${randomUUID().slice(0, 8)}`;
    await api('POST', '/users', { id: user });
    const key = (await api('POST', `/users/${user}/keys`, { name: 'phone' })).key as string;
    const opened = await signedInPage(browser, address, key);
    return { ...opened, key };
  }

  beforeAll(async () => {
    service = await startConsoleService(ADMIN_KEY);
    ({ model, app: t, address, consoleDir, browser } = service);
  }, 120_000);
  afterAll(() => service?.close());

  it('signs in with a stored key, shows an approval at phone size, and approving it lets the run finish', async () => {
    // A stored user's key, as an admin hands it out (a fresh user each attempt: vitest retries once).
    const user = `alice-${randomUUID().slice(0, 8)}`;
    await api('POST', '/users', { id: user });
    const key = (await api('POST', `/users/${user}/keys`, { name: 'phone' })).key as string;
    const { page, requested, cspViolations } = await phonePage(browser);

    await page.goto(`${address}/`);
    expect(new URL(page.url()).pathname).toBe('/app/');
    await page.getByLabel('API key').fill(key);
    expect(await seriousViolations(page)).toEqual([]);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Inbox' }).waitFor();
    await page.getByText('No approval is waiting.').waitFor();

    // The key went to the service once and stays nowhere in the browser: only an HttpOnly cookie.
    // Page-side code as text: the test files are typed for Node, not the DOM.
    const stored = await page.evaluate('JSON.stringify({ local: { ...localStorage }, session: { ...sessionStorage }, cookie: document.cookie })');
    expect(stored).toBe(JSON.stringify({ local: {}, session: {}, cookie: '' }));
    const cookies = await page.context().cookies();
    expect(cookies.map((cookie) => [cookie.name, cookie.httpOnly, cookie.sameSite])).toEqual([['mada_session', true, 'Strict']]);
    expect(cookies[0]!.value).not.toContain(key);

    // alice's agent (the scripted model) asks to delete a file: bash rm asks in the default mode.
    writeFileSync(join(t.workdir, 'doomed.txt'), 'bye\n');
    model.push(scripted.toolCalls({ name: 'bash', arguments: { command: 'rm doomed.txt' } }), scripted.text('Removed it.'));
    const run = await api('POST', '/runs', { agent_type: 'task', prompt: 'delete doomed.txt', working_dir: t.workdir }, key);
    expect(typeof run.id).toBe('string');

    const card = page.getByRole('article').filter({ hasText: 'rm doomed.txt' });
    await card.waitFor({ timeout: 10_000 });
    expect(await card.locator('pre').textContent()).toBe('bash: rm doomed.txt');
    expect(await card.textContent()).toContain(t.workdir);
    expect(await card.textContent()).toMatch(/\d+ min \d{2} s left/);
    await until(() => page.title(), (title) => title === '(1) mada', 'the count in the title');
    expect(await seriousViolations(page)).toEqual([]);
    // Usable on the phone: nothing wider than the screen, every answer on it.
    expect(await page.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(PHONE.width);
    for (const name of ['Approve', 'Deny', 'Always']) {
      const box = await card.getByRole('button', { name, exact: true }).boundingBox();
      expect(box, name).not.toBeNull();
      expect(box!.x + box!.width).toBeLessThanOrEqual(PHONE.width);
      expect(box!.height).toBeGreaterThanOrEqual(44);
    }
    expect(existsSync(join(t.workdir, 'doomed.txt'))).toBe(true);

    await card.getByRole('button', { name: 'Approve', exact: true }).click();
    const ended = await until(() => api('GET', `/runs/${run.id as string}`, undefined, key), (r) => r.status === 'succeeded' || r.status === 'failed', 'the run to end');
    expect(ended.status).toBe('succeeded');
    expect(ended.response).toBe('Removed it.');
    expect(existsSync(join(t.workdir, 'doomed.txt'))).toBe(false);
    await page.getByText('No approval is waiting.').waitFor();
    await until(() => page.title(), (title) => title === 'mada', 'the count to leave the title');

    expect(requested.filter((url) => !url.startsWith(`${address}/`))).toEqual([]);
    expect(cspViolations).toEqual([]);
  }, 60_000);

  it('streams a run on its page, shows each event once after a reload, and cancels it', async () => {
    const { page, key, requested } = await signedIn();
    writeFileSync(join(t.workdir, 'kept.txt'), 'stay\n');
    model.push(scripted.toolCalls({ name: 'bash', arguments: { command: 'rm kept.txt' } }), scripted.text('Removed it.'));
    const run = await api('POST', '/runs', { agent_type: 'task', prompt: 'delete kept.txt', working_dir: t.workdir }, key);

    await page.getByRole('link', { name: 'Runs' }).click();
    await page.getByRole('heading', { name: 'Runs' }).waitFor();
    const link = page.getByRole('link', { name: /delete kept\.txt/ });
    await link.waitFor();
    expect(await seriousViolations(page)).toEqual([]);
    await link.click();
    expect(new URL(page.url()).pathname).toBe(`/app/runs/${run.id as string}`);
    const asked = page.getByText('Approval asked: bash: rm kept.txt');
    await asked.waitFor({ timeout: 10_000 });
    expect(await seriousViolations(page)).toEqual([]);

    // A reload replays the stored events: the same ones, each once.
    const before = await page.locator('ol.events > li').evaluateAll((items) => items.map((item) => item.getAttribute('data-event-id')));
    await page.reload();
    await asked.waitFor();
    const after = await page.locator('ol.events > li').evaluateAll((items) => items.map((item) => item.getAttribute('data-event-id')));
    expect(after).toEqual(before);
    expect(new Set(after).size).toBe(after.length);
    const stored = await api('GET', `/runs/${run.id as string}`, undefined, key);
    expect(after.map(Number)).toEqual(Array.from({ length: stored.last_event_id as number }, (_, index) => index + 1));

    await page.getByRole('button', { name: 'Cancel run' }).click();
    const ended = await until(() => api('GET', `/runs/${run.id as string}`, undefined, key), (r) => r.status === 'cancelled', 'the run to be cancelled');
    expect(ended.status).toBe('cancelled');
    await page.getByRole('button', { name: 'Cancel run' }).waitFor({ state: 'detached' });
    expect(existsSync(join(t.workdir, 'kept.txt'))).toBe(true);
    expect(requested.filter((url) => !url.startsWith(`${address}/`))).toEqual([]);
  }, 60_000);

  /**
   * A service of the test's own, with a model of its own: what a cancelled run of another test
   * left in the shared model's script cannot answer this one's runs.
   */
  async function ownService(database?: TestDatabase): Promise<{ app: TestApp; model: ScriptedModel; address: string }> {
    const own = await startScriptedModel();
    const app = await createTestApp({
      model: { url: own.url },
      consoleDir,
      env: { API_KEYS: `root:${ADMIN_KEY}`, ADMIN_USERS: 'root', RATE_LIMIT_PER_MINUTE: '0' },
      ...(database === undefined ? {} : { database }),
    });
    return { app, model: own, address: await app.app.listen({ port: 0, host: '127.0.0.1' }) };
  }

  /** Signs in with the key on a new phone-size page of the service at `here`. */
  async function signInAt(here: string, key: string, prepare?: (page: Page) => Promise<void>): Promise<Page> {
    return (await signedInPage(browser, here, key, prepare)).page;
  }

  it('says so on the card when a call is longer than its box, so a removal padded below the fold is not approved unseen', async () => {
    const { page, key } = await signedIn();
    // Red-team: a model steered by a hostile file pads a removal far below a harmless start.
    // (Spaces would not do it here: at the end of a wrapped line they hang instead of wrapping.)
    const padded = `echo checking the build${'\n'.repeat(300)}rm padded.txt`;
    model.push(
      scripted.toolCalls({ name: 'bash', arguments: { command: padded } }),
      scripted.toolCalls({ name: 'bash', arguments: { command: 'rm plain.txt' } }),
      scripted.text('left both'),
    );
    await api('POST', '/runs', { agent_type: 'task', prompt: 'check the build', working_dir: t.workdir }, key);
    const deny = async (): Promise<void> => {
      const [approval] = (await api('GET', '/approvals?status=pending', undefined, key)).approvals as { id: string }[];
      await api('POST', `/approvals/${approval!.id}`, { decision: 'deny' }, key);
    };
    const warning = 'The call is longer than this box shows: scroll it to read all of it before you answer.';
    const long = page.getByRole('article').filter({ hasText: 'echo checking the build' });
    await long.getByRole('note').filter({ hasText: warning }).waitFor({ timeout: 10_000 });
    expect(await seriousViolations(page)).toEqual([]);
    await deny();
    // The same run's next call fits its box: no such note.
    const short = page.getByRole('article').filter({ hasText: 'rm plain.txt' });
    await short.waitFor({ timeout: 10_000 });
    expect(await short.getByRole('note').count()).toBe(0);
    await deny();
    await page.context().close();
  }, 60_000);

  it('takes an approval answered elsewhere out of the Inbox at once, counts them in the title, notifies, and explains a 409', async () => {
    const own = await ownService();
    try {
      const key = ADMIN_KEY;
      const ask = (path: string, body?: unknown) => call(own.address, path, body);
      const page = await signInAt(own.address, key);
      await page.getByRole('button', { name: 'Turn on notifications' }).waitFor();
      await page.context().grantPermissions(['notifications'], { origin: own.address });
      await page.context().addInitScript(RECORD_NOTIFICATIONS);
      await page.reload();
      await page.getByText('No approval is waiting.').waitFor();
      // Allowed now: the button that asks is gone.
      expect(await page.getByRole('button', { name: 'Turn on notifications' }).count()).toBe(0);

      // Each run asks first; both answers come after (the script is one queue, in order).
      own.model.push(scripted.toolCalls({ name: 'bash', arguments: { command: 'rm first.txt' } }));
      await ask('/runs', { agent_type: 'task', prompt: 'first', working_dir: own.app.workdir });
      const first = page.getByRole('article').filter({ hasText: 'rm first.txt' });
      await first.waitFor({ timeout: 10_000 });
      own.model.push(scripted.toolCalls({ name: 'bash', arguments: { command: 'rm second.txt' } }), scripted.text('ok'), scripted.text('ok'));
      await ask('/runs', { agent_type: 'task', prompt: 'second', working_dir: own.app.workdir });
      const second = page.getByRole('article').filter({ hasText: 'rm second.txt' });
      await second.waitFor({ timeout: 10_000 });
      await until(() => page.title(), (title) => title === '(2) mada', 'two in the title');
      const notified = await until(() => page.evaluate('window.__notified') as Promise<string[]>, (list) => list.length === 2, 'two notifications');
      expect(notified).toEqual(['mada: approval waiting | bash: rm first.txt', 'mada: approval waiting | bash: rm second.txt']);

      // Answered with the key (the CLI, a script): the card leaves without a reload, long before
      // the fallback poll (30 s) would ask.
      const pending = (await ask('/approvals?status=pending')).approvals as { id: string; args: { command: string } }[];
      const idOf = (command: string): string => pending.find((approval) => approval.args.command === command)!.id;
      await ask(`/approvals/${idOf('rm first.txt')}`, { decision: 'deny', message: 'not now' });
      await first.waitFor({ state: 'detached', timeout: 3000 });
      await until(() => page.title(), (title) => title === '(1) mada', 'one in the title');
      expect(await second.count()).toBe(1);

      // A second tab whose stream is cut still shows the card (the list is read on opening); the
      // answer it sends after another answered gets the 409, said in the Inbox.
      const other = await signInAt(own.address, key, async (tab) => void (await tab.route('**/approvals/events', (route) => route.abort())));
      const stale = other.getByRole('article').filter({ hasText: 'rm second.txt' });
      await stale.waitFor();
      await ask(`/approvals/${idOf('rm second.txt')}`, { decision: 'deny' });
      await second.waitFor({ state: 'detached', timeout: 3000 });
      await stale.getByRole('button', { name: 'Approve', exact: true }).click();
      await other.getByRole('alert').filter({ hasText: 'Not answered here: bash: rm second.txt: Approval already decided' }).waitFor();
      await other.getByRole('heading', { name: 'Inbox' }).waitFor();
      await until(() => page.title(), (title) => title === 'mada', 'the count to leave the title');
      await other.context().close();
      await page.context().close();
    } finally {
      await own.app.close();
      await own.model.close();
    }
  }, 60_000);
  it('keeps the session across a restart of the service on the same database', async () => {
    const database = await createTestDatabase('sqlite');
    // The first service leaves the database file in place when it stops; the second opens it anew.
    const before = await ownService({ ...database, drop: async () => undefined });
    let after: TestApp | undefined;
    try {
      const here = before.address;
      const page = await signInAt(here, ADMIN_KEY);
      await page.getByText('No approval is waiting.').waitFor();
      await before.app.close();

      after = await createTestApp({ model: { url: before.model.url }, consoleDir, env: { API_KEYS: `root:${ADMIN_KEY}`, RATE_LIMIT_PER_MINUTE: '0' }, shareDatabaseOf: before.app });
      expect(await after.app.listen({ port: Number(new URL(here).port), host: '127.0.0.1' })).toBe(here);
      // The open page's stream comes back on its own, signed in by the same cookie.
      before.model.push(scripted.toolCalls({ name: 'bash', arguments: { command: 'rm after.txt' } }));
      expect(typeof (await call(here, '/runs', { agent_type: 'task', prompt: 'after', working_dir: after.workdir })).id).toBe('string');
      const card = page.getByRole('article').filter({ hasText: 'rm after.txt' });
      await card.waitFor({ timeout: 10_000 });
      // And a reload finds the console, not the sign-in.
      await page.reload();
      await card.waitFor();
      expect(await page.getByLabel('API key').count()).toBe(0);
      await page.context().close();
    } finally {
      await after?.close();
      await before.model.close();
      await database.drop();
    }
  }, 60_000);
});
