/**
 * Debian's Chromium driven by playwright-core, for the console's browser tests. In CI (CI set) a missing browser
 * fails the suite; elsewhere the suite is skipped with a note saying how to install it. Each page records what
 * the browser complained about (script errors, Content-Security-Policy refusals), so a test can insist on none.
 */
import { existsSync, mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Browser, chromium, Page } from 'playwright-core';
import { REPO_ROOT } from './shared';

export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/** Where screenshots go: docs/screenshots (committed, linked from the README) with UPDATE_SCREENSHOTS=1, else a scratch folder. */
export const SCREENSHOTS = process.env.UPDATE_SCREENSHOTS ? join(REPO_ROOT, 'docs/screenshots') : mkdtempSync(join(tmpdir(), 'reso-console-'));

export async function launchChromium(ctx: Mocha.Context): Promise<Browser> {
  if (!existsSync(CHROMIUM)) {
    if (process.env.CI) throw new Error(`no Chromium at ${CHROMIUM}: CI installs Debian's chromium before the tests (.ci/run); the console's browser tests cannot run without it`);
    console.log(`\n  NOTE: no Chromium at ${CHROMIUM}, so the console's browser tests are SKIPPED here (CI installs it and runs them).\n`
      + '        Install it with: apt-get install -y chromium   (or set CHROMIUM_PATH)\n');
    ctx.skip();
  }
  // Flags for a closed network and a root user: no background connections, no sandbox.
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
}

export interface ConsolePage {
  readonly page: Page;
  /** What the browser reported as errors so far (script errors, CSP refusals, failed loads). */
  readonly complaints: string[];
  close(): Promise<void>;
}

/** A fresh page (no storage shared with other tests) at the console, `width` px wide. */
export async function openConsole(browser: Browser, origin: string, width = 1280): Promise<ConsolePage> {
  const context = await browser.newContext({ viewport: { width, height: 900 }, acceptDownloads: true });
  const page = await context.newPage();
  const complaints: string[] = [];
  page.on('console', (m) => { if (m.type() === 'error') complaints.push(m.text()); });
  page.on('pageerror', (e) => complaints.push(String(e)));
  page.on('dialog', (d) => void d.accept());
  await page.goto(`${origin}/console/`);
  return { page, complaints, close: () => context.close() };
}

/** Signs in with a token and waits for the first view to be drawn. */
export async function signIn(c: ConsolePage, token: string): Promise<void> {
  await c.page.fill('#token', token);
  await c.page.press('#token', 'Enter');
  await c.page.waitForSelector('body[data-ready]');
}

export async function screenshot(page: Page, name: string): Promise<void> {
  mkdirSync(SCREENSHOTS, { recursive: true });
  await page.screenshot({ path: join(SCREENSHOTS, `${name}.png`), fullPage: true });
}

/** A table's body as text, row by row. */
export function tableText(page: Page, selector: string): Promise<string[][]> {
  return page.$$eval(`${selector} tbody tr`, (rows) => rows.map((r) => Array.from(r.querySelectorAll('td')).map((td) => td.textContent ?? '')));
}

/** A table's column headings. */
export function tableHead(page: Page, selector: string): Promise<string[]> {
  return page.$$eval(`${selector} thead th`, (cells) => cells.map((c) => c.textContent ?? ''));
}
