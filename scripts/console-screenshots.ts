/**
 * Makes the README's pictures of the console from the built service, as a user would see it: the
 * Inbox on a phone with an approval waiting, and a run's page (answer, events, diff) on a desktop.
 *
 *   npm run build && npx tsx scripts/console-screenshots.ts
 *
 * The model is the project's scripted runtime; the service is `packages/api/dist/main.js` with a
 * key, started in a temporary directory; the browser is the system's Chromium. Writes
 * docs/images/console-inbox-phone.png and docs/images/console-run-desktop.png.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser, type Page } from 'playwright-core';
import { scripted, startScriptedModel } from '../packages/testkit/src/index.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const OUT = join(ROOT, 'docs', 'images');
const KEY = 'screenshot-key-5f0c2a9e71d4';
const PORT = 18_000 + Math.floor(Math.random() * 1000);
const ADDRESS = `http://127.0.0.1:${PORT}`;

async function api(method: string, path: string, body?: unknown): Promise<Record<string, unknown>> {
  const response = await fetch(`${ADDRESS}${path}`, {
    method,
    headers: { 'x-api-key': KEY, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${await response.text()}`);
  return (await response.json()) as Record<string, unknown>;
}

async function until<T>(what: string, probe: () => Promise<T | undefined>): Promise<T> {
  for (let i = 0; i < 300; i += 1) {
    const found = await probe().catch(() => undefined);
    if (found !== undefined) return found;
    await sleep(100);
  }
  throw new Error(`timed out waiting for ${what}`);
}

async function signIn(browser: Browser, viewport: { width: number; height: number }, mobile: boolean): Promise<Page> {
  const context = await browser.newContext({ viewport, isMobile: mobile, hasTouch: mobile, deviceScaleFactor: mobile ? 2 : 1 });
  const page = await context.newPage();
  await page.goto(`${ADDRESS}/app/`);
  await page.getByLabel('API key').fill(KEY);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { name: 'Inbox' }).waitFor();
  return page;
}

async function main(): Promise<void> {
  const base = mkdtempSync(join(tmpdir(), 'mada-shots-'));
  const shop = join(base, 'shop');
  mkdirSync(shop);
  writeFileSync(join(shop, 'prices.py'), 'TAX = 0.19\n\ndef gross(net):\n    return net * (1 + TAX)\n');
  const model = await startScriptedModel({ runtime: { contextLength: 32_768 } });
  model.push(
    scripted.toolCalls({ name: 'read_file', arguments: { file_path: join(shop, 'prices.py') } }),
    scripted.toolCalls({ name: 'edit_file', arguments: { file_path: join(shop, 'prices.py'), old_string: '    return net * (1 + TAX)', new_string: '    return round(net * (1 + TAX), 2)' } }),
    scripted.text('Done. `gross()` now **rounds to cents**:\n\n- `prices.py`: `round(net * (1 + TAX), 2)`\n\nRun `pytest` to check the totals.'),
    scripted.toolCalls({ name: 'bash', arguments: { command: 'rm -rf build dist', description: 'Remove old build output' } }),
  );
  const service = spawn(process.execPath, [join(ROOT, 'packages/api/dist/main.js')], {
    cwd: base,
    env: { PATH: process.env.PATH ?? '', HOME: base, PORT: String(PORT), DATA_DIR: join(base, 'data'), API_KEYS: `alice:${KEY}`, ALLOWED_PATHS: shop, LLM_BASE_URL: model.url, LLM_MODEL: 'qwen2.5-coder:7b', LOG_FORMAT: 'json' },
    stdio: 'ignore',
  });
  let browser: Browser | undefined;
  try {
    await until('the service', async () => ((await fetch(`${ADDRESS}/health`)).ok ? true : undefined));
    const edit = await api('POST', '/runs', { agent_type: 'task', prompt: 'Round gross prices to cents', working_dir: shop, mode: 'auto_accept' });
    await until('the edit run', async () => (['succeeded', 'failed'].includes((await api('GET', `/runs/${edit.id as string}`)).status as string) ? true : undefined));
    await api('POST', '/runs', { agent_type: 'task', prompt: 'Clean the old build output', working_dir: shop, mode: 'default' });
    await until('the approval', async () => (((await api('GET', '/approvals?status=pending')).approvals as unknown[]).length > 0 ? true : undefined));

    mkdirSync(OUT, { recursive: true });
    browser = await chromium.launch({ executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium', args: process.getuid?.() === 0 ? ['--no-sandbox'] : [] });
    const phone = await signIn(browser, { width: 390, height: 844 }, true);
    await phone.getByRole('button', { name: 'Approve' }).first().waitFor();
    await phone.screenshot({ path: join(OUT, 'console-inbox-phone.png') });

    const desktop = await signIn(browser, { width: 1280, height: 900 }, false);
    await desktop.goto(`${ADDRESS}/app/runs/${edit.id as string}`);
    await desktop.getByRole('article', { name: 'Changes to prices.py' }).waitFor({ timeout: 15_000 });
    // Rows are measured after they first render: wait for the last one.
    const lastRow = desktop.getByRole('region', { name: 'Events of the run' }).locator('p.small', { hasText: /^Done\.$/ });
    await lastRow.waitFor();
    // A full-page capture resizes the page while it takes it, and the event list measures its rows
    // again then: one capture in a few caught it half-way (one row, an empty box, no changes).
    // The viewport takes the page's height first, and the capture waits for the list to settle.
    await desktop.setViewportSize({ width: 1280, height: (await desktop.evaluate('document.documentElement.scrollHeight')) as number });
    await lastRow.waitFor();
    await desktop.evaluate('new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve)))');
    await desktop.screenshot({ path: join(OUT, 'console-run-desktop.png') });
    process.stdout.write(`wrote ${OUT}/console-inbox-phone.png and console-run-desktop.png\n`);
  } finally {
    await browser?.close();
    service.kill('SIGTERM');
    await model.close();
    rmSync(base, { recursive: true, force: true });
  }
}

await main();
