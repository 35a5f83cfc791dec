/**
 * A real browser for the console's tests and the compat suite's analytics.js client: Debian's
 * Chromium (/usr/bin/chromium, installed by `node scripts/ensure-installed.mjs --for-tests`,
 * which `npm test` runs) driven by playwright-core, headless, with a fresh profile each time.
 * The playwright package's own browser download is not used: it cannot be reached from every
 * machine the tests run on. A missing Chromium fails the test with the way to install it; it
 * never skips.
 *
 * The flags turn off Chromium's own traffic (updates, sync, safe-browsing lists): on a
 * machine with a closed network those connections are refused and the browser stalls.
 */
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';

export const CHROMIUM_PATH = process.env.TRIBUTARY_CHROMIUM ?? '/usr/bin/chromium';

export const CHROMIUM_FLAGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

export interface TestBrowser {
  context: BrowserContext;
  page: Page;
  /** Uncaught page errors and Content-Security-Policy violations, as the browser reported them. */
  problems: string[];
  /** Every URL the page requested, to check what never appears in one. */
  requestedUrls: string[];
  screenshot(path: string): Promise<void>;
  close(): Promise<void>;
}

export async function openBrowser(options: { width?: number; height?: number } = {}): Promise<TestBrowser> {
  if (!existsSync(CHROMIUM_PATH)) {
    throw new Error(
      `Chromium is not at ${CHROMIUM_PATH}. Run \`node scripts/ensure-installed.mjs --for-tests\` (npm test does), ` +
        `or install Debian's "chromium" package; TRIBUTARY_CHROMIUM names another binary.`,
    );
  }
  const userDataDir = mkdtempSync(join(tmpdir(), 'tributary-chromium-'));
  let context: BrowserContext;
  try {
    context = await chromium.launchPersistentContext(userDataDir, {
      executablePath: CHROMIUM_PATH,
      headless: true,
      args: CHROMIUM_FLAGS,
      viewport: { width: options.width ?? 1280, height: options.height ?? 860 },
      timeout: 60_000,
    });
  } catch (error) {
    rmSync(userDataDir, { recursive: true, force: true });
    throw error;
  }
  const page = context.pages()[0] ?? (await context.newPage());
  const problems: string[] = [];
  const requestedUrls: string[] = [];
  page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
  page.on('console', (message) => {
    if (/Content Security Policy/i.test(message.text())) problems.push(`CSP: ${message.text()}`);
  });
  page.on('request', (request) => requestedUrls.push(request.url()));
  return {
    context,
    page,
    problems,
    requestedUrls,
    async screenshot(path) {
      mkdirSync(dirname(path), { recursive: true });
      await page.screenshot({ path, fullPage: true });
    },
    async close() {
      await context.close();
      rmSync(userDataDir, { recursive: true, force: true });
    },
  };
}
