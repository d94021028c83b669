import { execFileSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { AxeBuilder } from '@axe-core/playwright';
import { startScriptedModel, type ScriptedModel } from '@mada/testkit';
import { chromium, type Browser, type Page } from 'playwright-core';
import { tempDir } from '../../../test/helpers/temp-dirs.js';
import { createTestApp, type TestApp } from '../../api/test/support/app.js';

/** The system's Chromium (Debian `chromium`; .ci/run installs it): nothing is downloaded. */
export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/** A phone: the size TEAMS.md section 11 asks every view to work at. */
export const PHONE = { width: 390, height: 844 };

const WEB_DIR = fileURLToPath(new URL('..', import.meta.url));

/** The console built from this checkout into a fresh directory (the one `npm start` serves is left alone). */
export function buildConsole(): string {
  const out = tempDir('mada-web-');
  const vite = join(dirname(createRequire(join(WEB_DIR, 'package.json')).resolve('vite/package.json')), 'bin', 'vite.js');
  execFileSync(process.execPath, [vite, 'build', '--outDir', out, '--emptyOutDir', '--logLevel', 'warn'], { cwd: WEB_DIR, stdio: 'pipe' });
  return out;
}

export function launchChromium(): Promise<Browser> {
  // As root (CI, containers) Chromium refuses to start without --no-sandbox.
  const args = process.getuid?.() === 0 ? ['--no-sandbox'] : [];
  return chromium.launch({ executablePath: CHROMIUM, args });
}

/** A page at phone size that records every URL it asks for and every CSP report in its console. */
export async function phonePage(browser: Browser): Promise<{ page: Page; requested: string[]; cspViolations: string[] }> {
  const context = await browser.newContext({ viewport: PHONE, isMobile: true, hasTouch: true, deviceScaleFactor: 2 });
  const page = await context.newPage();
  const requested: string[] = [];
  const cspViolations: string[] = [];
  page.on('request', (request) => requested.push(request.url()));
  page.on('console', (message) => {
    if (message.text().includes('Content Security Policy')) cspViolations.push(message.text());
  });
  return { page, requested, cspViolations };
}

/** axe-core's serious and critical findings on the page as it is now. */
export async function seriousViolations(page: Page): Promise<string[]> {
  const results = await new AxeBuilder({ page }).analyze();
  return results.violations
    .filter((violation) => violation.impact === 'serious' || violation.impact === 'critical')
    .map((violation) => `${violation.id}: ${violation.help} (${violation.nodes.map((node) => node.target.join(' ')).join(', ')})`);
}

/** A new phone-size page signed in with `key`, on the Inbox; `prepare` sees the page before it opens. */
export async function signedInPage(
  browser: Browser,
  address: string,
  key: string,
  prepare?: (page: Page) => Promise<void>,
): Promise<Awaited<ReturnType<typeof phonePage>>> {
  const opened = await phonePage(browser);
  await prepare?.(opened.page);
  await opened.page.goto(`${address}/app/`);
  await opened.page.getByLabel('API key').fill(key);
  await opened.page.getByRole('button', { name: 'Sign in' }).click();
  await opened.page.getByRole('heading', { name: 'Inbox' }).waitFor();
  return opened;
}

/** Nothing wider than the phone's screen: no view scrolls sideways. */
export async function fitsThePhone(page: Page): Promise<boolean> {
  return ((await page.evaluate('document.documentElement.scrollWidth')) as number) <= PHONE.width;
}

/** The console built into a directory of its own, served by a real service with the scripted model, and Chromium. */
export interface ConsoleService {
  model: ScriptedModel;
  app: TestApp;
  /** The service's address on loopback, `http://127.0.0.1:port`. */
  address: string;
  consoleDir: string;
  browser: Browser;
  /** Stops all of it and removes the built console. */
  close(): Promise<void>;
}

/** Builds the console and starts a service (with `adminKey` as root's key, no rate limit) and Chromium. */
export async function startConsoleService(adminKey: string, env: Record<string, string> = {}): Promise<ConsoleService> {
  const consoleDir = buildConsole();
  let model: ScriptedModel | undefined;
  let app: TestApp | undefined;
  let browser: Browser | undefined;
  const close = async (): Promise<void> => {
    await browser?.close();
    await app?.close();
    await model?.close();
    rmSync(consoleDir, { recursive: true, force: true });
  };
  try {
    model = await startScriptedModel();
    app = await createTestApp({
      model: { url: model.url },
      consoleDir,
      env: { API_KEYS: `root:${adminKey}`, ADMIN_USERS: 'root', RATE_LIMIT_PER_MINUTE: '0', ...env },
    });
    const address = await app.app.listen({ port: 0, host: '127.0.0.1' });
    browser = await launchChromium();
    return { model, app, address, consoleDir, browser, close };
  } catch (error) {
    await close();
    throw error;
  }
}
