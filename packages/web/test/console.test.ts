import { randomUUID } from 'node:crypto';
import { existsSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { scripted, startScriptedModel, type ScriptedModel } from '@mada/testkit';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../api/test/support/app.js';
import { until } from '../../api/test/support/until.js';
import { buildConsole, launchChromium, phonePage, PHONE, seriousViolations } from './browser.js';

/**
 * The console in a real browser (the system's headless Chromium) against the real service on
 * loopback and the scripted model: sign in with a stored key, see a run's approval arrive in the
 * Inbox at phone size, approve it, and the run does what it asked; follow a run on its page
 * across a reload and cancel it.
 */

const ADMIN_KEY = 'root-key-7f3a9c20e4b1';

describe('the console in a browser', () => {
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

  /** A fresh stored user (vitest retries a test once), signed in on a new phone-size page. */
  async function signedIn(): Promise<Awaited<ReturnType<typeof phonePage>> & { key: string }> {
    const user = `alice-${randomUUID().slice(0, 8)}`;
    await api('POST', '/users', { id: user });
    const key = (await api('POST', `/users/${user}/keys`, { name: 'phone' })).key as string;
    const opened = await phonePage(browser);
    await opened.page.goto(`${address}/app/`);
    await opened.page.getByLabel('API key').fill(key);
    await opened.page.getByRole('button', { name: 'Sign in' }).click();
    await opened.page.getByRole('heading', { name: 'Inbox' }).waitFor();
    return { ...opened, key };
  }

  beforeAll(async () => {
    consoleDir = buildConsole();
    model = await startScriptedModel();
    t = await createTestApp({
      model: { url: model.url },
      consoleDir,
      env: { API_KEYS: `root:${ADMIN_KEY}`, ADMIN_USERS: 'root', RATE_LIMIT_PER_MINUTE: '0' },
    });
    address = await t.app.listen({ port: 0, host: '127.0.0.1' });
    browser = await launchChromium();
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await t?.close();
    await model?.close();
    if (consoleDir) rmSync(consoleDir, { recursive: true, force: true });
  });

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
});
