import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { scripted, type ScriptedModel } from '@mada/testkit';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestApp } from '../../api/test/support/app.js';
import { deferred } from '../../api/test/support/quota-client.js';
import { until } from '../../api/test/support/until.js';
import { fitsThePhone, seriousViolations, signedInPage, startConsoleService, type ConsoleService } from './browser.js';

/**
 * The console's run page (its answer, its diff, Revert), conversations and account, in the
 * system's headless Chromium at phone size, against the real service and the scripted model.
 */

const ADMIN_KEY = 'root-key-5b1e07d9a3c6';

/** A first look around: the agents answer only after calling a tool. */
const LOOK = scripted.toolCalls({ name: 'glob_files', arguments: { pattern: '*' } });

describe('the console views in a browser', () => {
  let service: ConsoleService;
  let model: ScriptedModel;
  let t: TestApp;
  let address: string;
  let browser: Browser;

  const call = async (method: string, path: string, body?: unknown, key = ADMIN_KEY): Promise<{ status: number; body: Record<string, unknown> }> => {
    const response = await fetch(`${address}${path}`, {
      method,
      headers: { 'x-api-key': key, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await response.text();
    return { status: response.status, body: (text === '' ? {} : JSON.parse(text)) as Record<string, unknown> };
  };

  /** A fresh stored user and its key (vitest retries a test once: a new user each attempt). */
  async function newUser(): Promise<{ user: string; key: string }> {
    const user = `bob-${randomUUID().slice(0, 8)}`;
    expect((await call('POST', '/users', { id: user })).status).toBe(201);
    const key = (await call('POST', `/users/${user}/keys`, { name: 'phone' })).body.key as string;
    return { user, key };
  }

  /** A directory of its own under the shared working directory, so tests never meet each other's files. */
  function ownDir(): string {
    const dir = join(t.workdir, `views-${randomUUID().slice(0, 8)}`);
    mkdirSync(dir);
    return dir;
  }

  async function endedRun(key: string, body: Record<string, unknown>): Promise<Record<string, unknown>> {
    const started = await call('POST', '/runs', body, key);
    expect(started.status, JSON.stringify(started.body)).toBe(202);
    const id = started.body.id as string;
    return until(
      async () => (await call('GET', `/runs/${id}`, undefined, key)).body,
      (run) => ['succeeded', 'failed', 'cancelled'].includes(run.status as string),
      'the run to end',
    );
  }

  beforeAll(async () => {
    // The webhook test's receiver is on loopback, which the service refuses without this.
    service = await startConsoleService(ADMIN_KEY, { WEBHOOK_ALLOW_PRIVATE: 'true' });
    ({ model, app: t, address, browser } = service);
  }, 120_000);
  afterAll(() => service?.close());

  it("shows an edit's diff, explains the 409 of a file changed since, and Revert puts the file back on disk", async () => {
    const { key } = await newUser();
    const dir = ownDir();
    const file = join(dir, 'notes.txt');
    writeFileSync(file, 'alpha\nbeta\n');
    model.push(scripted.toolCalls({ name: 'edit_file', arguments: { file_path: 'notes.txt', old_string: 'beta', new_string: 'gamma' } }), scripted.text('Edited.'));
    const run = await endedRun(key, { agent_type: 'task', prompt: 'edit notes', working_dir: dir, mode: 'auto_accept' });
    expect(run.status).toBe('succeeded');
    expect(readFileSync(file, 'utf8')).toBe('alpha\ngamma\n');

    const { page, requested } = await signedInPage(browser, address, key);
    await page.goto(`${address}/app/runs/${run.id as string}`);
    const changes = page.getByRole('article', { name: 'Changes to notes.txt' });
    await changes.waitFor({ timeout: 10_000 });
    expect(await changes.getByRole('heading').textContent()).toContain('modified · +1 −1');
    expect(await changes.locator('.diff-code-delete').allTextContents()).toEqual(['beta']);
    expect(await changes.locator('.diff-code-insert').allTextContents()).toEqual(['gamma']);
    expect(await page.getByRole('region', { name: 'Events of the run' }).textContent()).toContain('Tool call: edit_file');
    expect(await seriousViolations(page)).toEqual([]);
    expect(await fitsThePhone(page)).toBe(true);

    // Someone edits the file after the run: Revert says so, and only the forced one goes on.
    writeFileSync(file, 'alpha\ngamma\nmine\n');
    await page.getByRole('button', { name: 'Revert', exact: true }).click();
    const refusal = page.getByRole('alert').filter({ hasText: 'These files changed after the run ended: notes.txt' });
    await refusal.waitFor();
    expect(readFileSync(file, 'utf8')).toBe('alpha\ngamma\nmine\n');
    expect(await seriousViolations(page)).toEqual([]);
    await refusal.getByRole('button', { name: 'Revert anyway' }).click();
    await page.getByRole('status').filter({ hasText: 'Reverted: notes.txt.' }).waitFor();
    expect(readFileSync(file, 'utf8')).toBe('alpha\nbeta\n');
    expect(requested.filter((url) => !url.startsWith(`${address}/`))).toEqual([]);
  }, 60_000);

  it("explains that a run's working directory has left the user's workspace, and shows nothing of it", async () => {
    const { user, key } = await newUser();
    const dir = ownDir();
    writeFileSync(join(dir, 'plan.md'), 'one\n');
    model.push(scripted.toolCalls({ name: 'edit_file', arguments: { file_path: 'plan.md', old_string: 'one', new_string: 'two' } }), scripted.text('Edited.'));
    const run = await endedRun(key, { agent_type: 'task', prompt: 'edit plan', working_dir: dir, mode: 'auto_accept' });
    expect(run.status).toBe('succeeded');
    // An admin gives the user another workspace: the run's directory is no longer theirs.
    const elsewhere = mkdtempSync(join(tmpdir(), 'mada-views-elsewhere-'));
    try {
      expect((await call('PATCH', `/users/${user}`, { workspace_paths: [elsewhere] })).status).toBe(200);
      const { page } = await signedInPage(browser, address, key);
      await page.goto(`${address}/app/runs/${run.id as string}`);
      await page.getByText(`Working directory no longer in your workspace: ${dir}. An admin has taken this directory out of your workspace`).waitFor({ timeout: 10_000 });
      expect(await page.getByRole('button', { name: 'Revert', exact: true }).count()).toBe(0);
      expect(await page.locator('.diff-code').count()).toBe(0);
      expect(await seriousViolations(page)).toEqual([]);
    } finally {
      rmSync(elsewhere, { recursive: true, force: true });
    }
  }, 60_000);

  /**
   * Every row of the list from top to bottom, as [first event id, last event id]: the list is
   * virtualised, so it is scrolled through a screen at a time. Page-side code as text: the test
   * files are typed for Node, not the DOM.
   */
  async function everyRow(page: Page, label: string): Promise<[number, number][]> {
    return (await page.evaluate(`(async () => {
      const box = document.querySelector('[aria-label="${label}"]');
      const rows = new Map();
      const frame = () => new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve)));
      box.scrollTop = 0;
      for (;;) {
        await frame();
        for (const li of box.querySelectorAll('li[data-event-id]')) rows.set(Number(li.dataset.eventId), Number(li.dataset.lastEventId));
        if (box.scrollTop + box.clientHeight >= box.scrollHeight - 1) break;
        box.scrollTop += box.clientHeight;
      }
      return [...rows.entries()].sort((a, b) => a[0] - b[0]);
    })()`)) as [number, number][];
  }

  /** Rows that show the events 1..`total` each exactly once: no gap, no overlap. */
  function coversOnce(rows: [number, number][], total: number): boolean {
    return rows.every(([first, last], index) => first === (index === 0 ? 1 : rows[index - 1]![1] + 1) && last >= first) && rows.at(-1)?.[1] === total;
  }

  it('keeps only the rows in view of a run of a thousand events, shows each once after a reload mid-run, and its streamed answer as one row', async () => {
    const { key } = await newUser();
    // 15 answers of 32 calls the tool refuses at once (no such argument): two events each. Then an
    // answer streamed in pieces further apart than the service's text frames (50 ms), each stored
    // as an event of its own, held before its end. It starts after a pause: on a loaded machine
    // the store may lag the tool calls, and pieces waiting for it are joined into one event.
    const refused = Array.from({ length: 32 }, (_, index) => ({ name: 'read_file', arguments: { nothing: index } }));
    const released = deferred();
    const pieces = ['The ', 'answer ', 'comes ', 'in ', 'pieces'].flatMap((piece) => [piece, scripted.pause(300)]);
    model.push(...Array.from({ length: 15 }, () => scripted.toolCalls(...refused)), scripted.chunks(scripted.pause(1500), ...pieces, scripted.until(released.promise), ', all of them.'));
    const started = await call('POST', '/runs', { agent_type: 'task', prompt: 'read a lot', working_dir: ownDir(), mode: 'auto_accept' }, key);
    const id = started.body.id as string;
    try {
      const { page } = await signedInPage(browser, address, key);
      await page.goto(`${address}/app/runs/${id}`);
      const list = page.getByRole('region', { name: 'Events of the run' });
      // The list follows the run down to its answer, streamed so far as one row...
      const answer = list.locator('li').filter({ hasText: 'The answer comes in pieces' });
      await answer.waitFor({ timeout: 30_000 });
      const mid = await call('GET', `/runs/${id}`, undefined, key);
      expect(mid.body.status).toBe('running');
      const stored = mid.body.last_event_id as number;
      expect(stored).toBeGreaterThan(960);
      expect(await answer.getAttribute('data-last-event-id')).toBe(String(stored));
      // ...made of several stored events (a row per event before: the pieces are far enough apart
      // to be stored apart, most of them even on a loaded machine).
      const first = Number(await answer.getAttribute('data-event-id'));
      expect(first).toBeLessThan(stored);
      // Only the rows in view are in the page.
      const inPage = await list.locator('li').count();
      expect(inPage).toBeGreaterThan(5);
      expect(inPage).toBeLessThan(100);
      expect(await list.locator('li[data-event-id="1"]').count()).toBe(0);

      // A reload mid-run replays the stored events: every one, each once, the answer one row.
      await page.reload();
      await answer.waitFor({ timeout: 15_000 });
      const replayed = await everyRow(page, 'Events of the run');
      expect(coversOnce(replayed, stored), JSON.stringify(replayed.slice(-3))).toBe(true);
      // A row for each event before the answer, and one for all of it.
      expect(replayed.length).toBe(first);
      expect(replayed.at(-1)).toEqual([first, stored]);
      expect(await seriousViolations(page)).toEqual([]);

      // The rest of the answer arrives live and joins the same row; the list follows it again.
      released.resolve();
      await list.evaluate((box) => box.scrollTo({ top: box.scrollHeight }));
      await list.locator('li').filter({ hasText: 'The answer comes in pieces, all of them.' }).waitFor({ timeout: 15_000 });
      const ended = await until(
        async () => (await call('GET', `/runs/${id}`, undefined, key)).body,
        (run) => run.status !== 'running',
        'the run to end',
      );
      expect(ended.status).toBe('succeeded');
      const total = ended.last_event_id as number;
      await list.locator(`li[data-event-id="${total}"]`).getByText('Done.').waitFor();
      expect(coversOnce(await everyRow(page, 'Events of the run'), total)).toBe(true);
    } finally {
      released.resolve();
    }
  }, 120_000);

  it("renders a model's answer as markdown, and its <img onerror> and <script> never run", async () => {
    const { key } = await newUser();
    const probe = `/xss-probe-${randomUUID().slice(0, 8)}`;
    const answer = [
      '**Done.** Here is `code`.',
      '',
      `<img src="${probe}" onerror="window.__pwned = 'img'">`,
      '',
      "<script>window.__pwned = 'script'</script>",
      '',
      `Inline <img src=x onerror="window.__pwned='inline'"> too, and ![a picture](https://elsewhere.invalid/p.png).`,
      '',
      'Hidden\u202Ereversed',
      '',
      "[a script link](javascript:window.__pwned='link') and [a data link](data:text/html,<script>alert(1)</script>).",
    ].join('\n');
    model.push(LOOK, scripted.text(answer));
    const run = await endedRun(key, { agent_type: 'task', prompt: 'say something', working_dir: ownDir(), mode: 'auto_accept' });
    expect(run.response).toBe(answer);

    const { page, requested, cspViolations } = await signedInPage(browser, address, key);
    await page.goto(`${address}/app/runs/${run.id as string}`);
    const answerBox = page.locator('.markdown');
    await answerBox.getByText('Done.').waitFor({ timeout: 10_000 });
    // Nothing ran and nothing was fetched: no flag set, no request for the images' addresses.
    await page.waitForTimeout(300);
    expect(await page.evaluate('window.__pwned')).toBeUndefined();
    expect(requested.filter((url) => url.includes(probe) || url.includes('elsewhere.invalid') || url.endsWith('/x'))).toEqual([]);
    // Markdown is rendered; the HTML in it is shown as the text it is.
    expect(await answerBox.locator('strong').first().textContent()).toBe('Done.');
    const text = (await answerBox.textContent()) ?? '';
    expect(text).toContain(`<img src="${probe}" onerror=`);
    expect(text).toContain("<script>window.__pwned = 'script'</script>");
    expect(text).toContain('Hidden<U+202E>reversed');
    expect(await answerBox.locator('img, script').count()).toBe(0);
    // A link the model wrote goes nowhere but to a web address: no script or data URL survives.
    const hrefs = await answerBox.locator('a').evaluateAll((links) => links.map((link) => link.getAttribute('href') ?? ''));
    expect(hrefs.filter((href) => /^\s*(javascript|data|vbscript):/i.test(href))).toEqual([]);
    await answerBox.getByText('a script link').click();
    await page.waitForTimeout(300);
    expect(await page.evaluate('window.__pwned')).toBeUndefined();
    expect(cspViolations).toEqual([]);
    expect(await seriousViolations(page)).toEqual([]);
  }, 60_000);

  it('starts a conversation in a working directory, sends a message and shows the turn live, then the answer', async () => {
    const { key } = await newUser();
    const dir = ownDir();
    const { page, requested } = await signedInPage(browser, address, key);
    await page.getByRole('link', { name: 'Conversations' }).click();
    await page.getByRole('heading', { name: 'Conversations', level: 1 }).waitFor();
    await page.getByText('No conversation yet.').waitFor();
    expect(await seriousViolations(page)).toEqual([]);

    await page.getByLabel('Agent').selectOption('task');
    await page.getByLabel('Working directory').fill(dir);
    await page.getByLabel('Title (optional)').fill('Phone chat');
    await page.getByRole('button', { name: 'Start conversation' }).click();
    await page.getByRole('heading', { name: 'Phone chat' }).waitFor();
    expect(await page.getByText(dir).count()).toBeGreaterThan(0);

    model.push(LOOK, scripted.text('Hello from **the agent**.'));
    await page.getByRole('textbox', { name: 'Message' }).fill('hi there');
    await page.getByLabel('Mode').selectOption('plan');
    await page.getByRole('button', { name: 'Send' }).click();
    await page.getByRole('region', { name: 'Events of the turn' }).getByText('Done.').waitFor({ timeout: 10_000 });
    const messages = page.getByRole('list', { name: 'Messages' });
    await messages.getByText('Hello from').waitFor();
    expect(await messages.locator('strong').textContent()).toBe('the agent');
    expect(await messages.getByText('hi there').count()).toBe(1);
    expect(await seriousViolations(page)).toEqual([]);
    expect(await fitsThePhone(page)).toBe(true);

    // The turn ran as asked: in plan mode, in that directory, with the message.
    const conversations = (await call('GET', '/conversations/', undefined, key)).body.conversations as { id: string; working_dir: string }[];
    expect(conversations.map((one) => one.working_dir)).toEqual([dir]);
    const runs = (await call('GET', '/runs', undefined, key)).body.runs as { mode: string; prompt: string; conversation_id: string }[];
    expect(runs.map((one) => [one.mode, one.prompt, one.conversation_id])).toEqual([['plan', 'hi there', conversations[0]!.id]]);

    // A reload shows the history from the stored pages.
    await page.reload();
    await messages.getByText('Hello from').waitFor();
    expect(await messages.locator('li').count()).toBe(2);
    expect(requested.filter((url) => !url.startsWith(`${address}/`))).toEqual([]);
  }, 60_000);

  it('creates a key shown once and revokes it; shows quotas and usage, per model too', async () => {
    const { user, key } = await newUser();
    model.push(LOOK, scripted.text('Looked.'));
    const run = await endedRun(key, { agent_type: 'explore', prompt: 'look around', working_dir: ownDir() });
    const usage = run.usage as { input_tokens: number; output_tokens: number };
    const { page } = await signedInPage(browser, address, key);
    await page.getByRole('link', { name: 'Account' }).click();
    await page.getByRole('heading', { name: 'Account' }).waitFor();
    await page.getByText(`${user} (member)`).waitFor();
    expect(await page.getByText('Runs a day').count()).toBe(1);
    const byModel = page.getByLabel('Today by model');
    await byModel.waitFor();
    expect(await byModel.locator('dt').allTextContents()).toEqual([String(run.model)]);
    expect(await byModel.locator('dd').allTextContents()).toEqual([`1 runs, ${usage.input_tokens + usage.output_tokens} tokens`]);
    expect(await seriousViolations(page)).toEqual([]);

    await page.getByLabel('Key name').fill('laptop');
    await page.getByRole('button', { name: 'Create key' }).click();
    const shown = page.getByLabel('New key');
    await shown.waitFor();
    const created = ((await shown.textContent()) ?? '').trim();
    expect(created).toMatch(/^mada_[A-Za-z0-9]{40,}$/);
    expect((await call('GET', '/me', undefined, created)).status).toBe(200);
    expect(await seriousViolations(page)).toEqual([]);
    expect(await fitsThePhone(page)).toBe(true);
    await page.getByRole('button', { name: 'I have copied it' }).click();
    expect(await page.getByText(created).count()).toBe(0);

    await page.getByRole('button', { name: 'Revoke laptop' }).click();
    await page.getByRole('button', { name: 'Revoke laptop' }).waitFor({ state: 'detached' });
    expect((await call('GET', '/me', undefined, created)).status).toBe(401);
    // The key this page signed in with still works: only the one revoked is gone.
    expect((await call('GET', '/me', undefined, key)).status).toBe(200);
    expect(await page.getByText(/revoked/).count()).toBe(1);
  }, 60_000);

  it('adds a webhook showing its secret once, lists its deliveries with their status, explains a refused URL, and deletes it', async () => {
    const receiver = createServer((request, response) => {
      request.resume();
      request.on('end', () => response.writeHead(204).end());
    });
    receiver.listen(0, '127.0.0.1');
    await once(receiver, 'listening');
    try {
      const hook = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
      const { key } = await newUser();
      const { page } = await signedInPage(browser, address, key);
      await page.getByRole('link', { name: 'Account' }).click();
      await page.getByRole('heading', { name: 'Webhooks' }).waitFor();
      await page.getByText('No webhooks yet.').waitFor();
      expect(await seriousViolations(page)).toEqual([]);

      // The service's reason for a URL it will not post to.
      await page.getByLabel('Webhook URL').fill('ftp://example.com/hook');
      await page.getByRole('button', { name: 'Add webhook' }).click();
      await page.getByRole('alert').filter({ hasText: 'Webhook URL must use http or https' }).waitFor();

      await page.getByLabel('Webhook URL').fill(hook);
      await page.getByLabel('A run asks for an approval').uncheck();
      await page.getByRole('button', { name: 'Add webhook' }).click();
      const shown = page.getByLabel('New webhook secret');
      await shown.waitFor();
      const secret = ((await shown.textContent()) ?? '').trim();
      expect(secret).toMatch(/^whsec_\S{43}$/);
      const stored = (await call('GET', '/me/webhooks', undefined, key)).body.webhooks as { id: string; url: string; events: string[] }[];
      expect(stored.map((webhook) => [webhook.url, webhook.events])).toEqual([[hook, ['run_ended']]]);
      const listed = page.getByRole('list', { name: 'My webhooks' });
      await listed.getByText(hook).waitFor();
      expect(await listed.textContent()).toContain('run_ended');
      expect(await seriousViolations(page)).toEqual([]);
      expect(await fitsThePhone(page)).toBe(true);
      await page.getByRole('button', { name: 'I have copied it' }).click();
      expect(await page.getByText(secret).count()).toBe(0);

      // A run of the user's ends: the delivery shows up under the webhook, delivered with the receiver's 204.
      model.push(LOOK, scripted.text('Done.'));
      await endedRun(key, { agent_type: 'task', prompt: 'finish', working_dir: ownDir(), mode: 'auto_accept' });
      await page.getByRole('button', { name: `Deliveries to ${hook}` }).click();
      await page.getByRole('list', { name: `Deliveries to ${hook}` }).getByText(/run_ended · delivered · 1 try · HTTP 204/).waitFor({ timeout: 15_000 });
      expect(await fitsThePhone(page)).toBe(true);

      await page.getByRole('button', { name: `Delete the webhook to ${hook}` }).click();
      await page.getByText('No webhooks yet.').waitFor();
      expect((await call('GET', '/me/webhooks', undefined, key)).body.webhooks).toEqual([]);
      expect((await call('GET', `/me/webhooks/${stored[0]!.id}`, undefined, key)).status).toBe(404);
    } finally {
      receiver.close();
    }
  }, 90_000);

  it('lets an admin create and disable a user and verify the audit log', async () => {
    const { page } = await signedInPage(browser, address, ADMIN_KEY);
    await page.getByRole('link', { name: 'Account' }).click();
    await page.getByRole('heading', { name: 'Users' }).waitFor();
    await page.getByRole('heading', { name: 'Audit log' }).waitFor();
    await page.getByRole('list', { name: 'Audit entries' }).getByText('service.started').first().waitFor();
    expect(await seriousViolations(page)).toEqual([]);

    const user = `carol-${randomUUID().slice(0, 8)}`;
    await page.getByLabel('User id').fill(user);
    await page.getByRole('button', { name: 'Create user' }).click();
    await page.getByRole('button', { name: `Disable ${user}` }).click();
    await page.getByRole('button', { name: `Enable ${user}` }).waitFor();
    const stored = await call('GET', `/users/${user}`);
    expect([stored.body.role, stored.body.disabled]).toEqual(['member', true]);

    await page.getByRole('button', { name: 'Verify the chain' }).click();
    await page.getByRole('status').filter({ hasText: 'The chain holds' }).waitFor();
    expect(await seriousViolations(page)).toEqual([]);
    expect(await fitsThePhone(page)).toBe(true);
  }, 60_000);
});
