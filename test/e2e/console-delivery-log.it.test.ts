/**
 * The acceptance test of the delivery log and web console: the whole pipeline — ingest,
 * router, dispatcher, retry-scheduler on a millisecond retry ladder, and the indexer behind
 * ingest's delivery-log routes — with real HTTP receivers, one of which answers a message's
 * first request with 503 and the next with 200. One Track call goes in; in a real browser
 * the console's delivery log finds both attempts (the 503, then the 200), and the message
 * view shows them on its timeline with the receiver's answers, within a deadline. The run
 * also takes screenshots of the main pages: into a temporary directory, or, with
 * TRIBUTARY_UPDATE_SCREENSHOTS=1, into docs/console/ for the README — so that a test run
 * leaves the tracked files as they were.
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { eventually, freePort, REPO_ROOT, stackEnv, startService, uniqueNamespace, type RunningService } from '@tributary/test/harness';
import { openBrowser, type TestBrowser } from '@tributary/test/harness/browser';
import type { Locator, Page } from 'playwright-core';
import { openPage, signIn, waitForText, waitShown } from './console-pages.js';
import { ADMIN_TOKEN, RetryPipeline } from './retry-pipeline.js';

const UPDATE_SCREENSHOTS = process.env.TRIBUTARY_UPDATE_SCREENSHOTS === '1';
const SCREENSHOTS = UPDATE_SCREENSHOTS ? join(REPO_ROOT, 'docs', 'console') : mkdtempSync(join(tmpdir(), 'tributary-console-screenshots-'));
const INDEXER_MAIN = join(REPO_ROOT, 'services', 'indexer', 'dist', 'main.js');
/** How long the indexer and the console may take to show what the receivers already saw. */
const DEADLINE_MS = 30_000;

/** A receiver whose answer to each message's n-th request the test decides, with a body to show. */
class ScriptedReceiver {
  readonly statuses = new Map<string, number[]>();
  private server: Server | undefined;
  private port = 0;

  constructor(private readonly answer: (attempt: number) => { status: number; body: string }) {}

  async start(): Promise<void> {
    this.server = createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        const { messageId } = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { messageId: string };
        const seen = this.statuses.get(messageId) ?? [];
        const { status, body } = this.answer(seen.length + 1);
        this.statuses.set(messageId, [...seen, status]);
        response.writeHead(status, { 'content-type': 'application/json' }).end(body);
      });
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.port = (this.server.address() as AddressInfo).port;
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}/hooks`;
  }

  async stop(): Promise<void> {
    const server = this.server;
    if (!server) return;
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
}

/** Clicks Search until the delivery log lists what `found` waits for: the indexer is asynchronous. */
async function searchUntil(page: Page, found: () => Promise<boolean>, what: string): Promise<void> {
  const deadline = Date.now() + DEADLINE_MS;
  for (;;) {
    await page.getByRole('button', { name: 'Search' }).click();
    await page.waitForTimeout(1_000);
    if (await found()) return;
    if (Date.now() > deadline) {
      const shown = await page.locator('main').innerText();
      throw new Error(`the delivery log did not show ${what} within ${DEADLINE_MS} ms; the page shows:\n${shown.slice(0, 3_000)}`);
    }
  }
}

async function rowIndex(rows: Locator, selector: string): Promise<number> {
  const all = await rows.evaluateAll((elements, wanted) => elements.map((element) => element.matches(wanted)), selector);
  return all.indexOf(true);
}

describe('delivery log in the web console (acceptance)', () => {
  const namespace = uniqueNamespace('e2e-console-log');
  const flaky = new ScriptedReceiver((attempt) => (attempt === 1 ? { status: 503, body: '{"error":"try again later"}' } : { status: 200, body: '{"received":true}' }));
  const retired = new ScriptedReceiver(() => ({ status: 410, body: '{"error":"endpoint retired"}' }));
  let pipeline: RetryPipeline | undefined;
  let indexer: RunningService | undefined;
  let dataDir: string | undefined;
  let browser: TestBrowser | undefined;

  /**
   * Started by the test itself rather than in beforeAll: without the indexer the test fails
   * with that reason, where a failing hook would report the test as skipped.
   */
  async function startEverything(): Promise<{ running: RetryPipeline; open: TestBrowser }> {
    if (!existsSync(INDEXER_MAIN)) {
      throw new Error(`${INDEXER_MAIN} is missing: this test needs the delivery-log indexer (services/indexer) built by \`npm run build\``);
    }
    await flaky.start();
    await retired.start();
    const indexerPort = await freePort();
    const running = new RetryPipeline(namespace, { RETRY_LADDER: '200ms,400ms,800ms', RETRY_WINDOW: '1m' }, { DELIVERY_LOG_URL: `http://127.0.0.1:${indexerPort}` });
    pipeline = running;
    await running.start();
    dataDir = mkdtempSync(join(tmpdir(), 'tributary-delivery-log-'));
    indexer = await startService('indexer', {
      env: { ...stackEnv(namespace), ADMIN_TOKEN, DELIVERY_LOG_DATA_DIR: dataDir, INSTANCE_ID: 'e2e-indexer' },
      port: indexerPort,
    });
    const open = await openBrowser();
    browser = open;
    return { running, open };
  }

  afterAll(async () => {
    await browser?.close();
    await indexer?.stop();
    await pipeline?.stop();
    await flaky.stop();
    await retired.stop();
    if (dataDir !== undefined) rmSync(dataDir, { recursive: true, force: true });
    if (!UPDATE_SCREENSHOTS) rmSync(SCREENSHOTS, { recursive: true, force: true });
  });

  it('finds both attempts of a message — the 503, then the 200 — in the delivery log and the message view', { timeout: 180_000 }, async () => {
    const { running: pipeline, open } = await startEverything();
    const { page } = open;
    const writeKey = `wk_${namespace}`;
    await pipeline.admin('PUT', '/sources/web', { name: 'Web site', writeKey });
    await pipeline.admin('PUT', '/destinations/crm-hooks', { name: 'CRM hooks', type: 'webhooks', sources: ['web'], settings: { sharedSecret: 'e2e-shared-secret', webhooks: [{ url: flaky.url }] } });
    await pipeline.admin('PUT', '/destinations/legacy-hooks', { name: 'Legacy hooks', type: 'webhooks', sources: ['web'], settings: { webhooks: [{ url: retired.url }] } });
    const [messageId] = await pipeline.track(writeKey, 1);
    await eventually(() => flaky.statuses.get(messageId!)?.join() === '503,200', 'the 503 and then the 200 at the receiver', 20_000);
    await eventually(() => retired.statuses.get(messageId!)?.join() === '410', 'the 410 of the retired receiver', 20_000);

    await signIn(page, pipeline.ingest.url, ADMIN_TOKEN);
    // One of the two requests that reached crm-hooks succeeded.
    await waitForText(page.locator('tr[data-destination="crm-hooks"] td.success-rate'), '50%', DEADLINE_MS);
    await open.screenshot(join(SCREENSHOTS, 'destinations.png'));

    // The delivery log, searched by message id: both attempts to crm-hooks, newest first.
    await openPage(page, 'Delivery log');
    await page.getByLabel('Message id').fill(messageId!);
    const rows = page.locator(`tr[data-attempt-id][data-message-id="${messageId}"]`);
    const retryRow = `tr[data-status="503"]`;
    const deliveredRow = `tr[data-status="200"]`;
    await searchUntil(page, async () => (await rows.filter({ hasText: 'crm-hooks' }).count()) >= 2, 'both attempts to crm-hooks');
    expect(await rows.filter({ hasText: 'crm-hooks' }).count()).toBe(2);
    const newer = await rowIndex(rows, deliveredRow);
    const older = await rowIndex(rows, retryRow);
    expect(newer, 'the 200 is listed').toBeGreaterThanOrEqual(0);
    expect(older, 'the 503 is listed').toBeGreaterThan(newer);
    expect(await rows.nth(older).innerText()).toMatch(/crm-hooks[\s\S]*\b1\b[\s\S]*retry[\s\S]*503/);
    expect(await rows.nth(newer).innerText()).toMatch(/crm-hooks[\s\S]*\b2\b[\s\S]*delivered[\s\S]*200/);
    await open.screenshot(join(SCREENSHOTS, 'delivery-log.png'));

    // The message view: the attempt timeline of crm-hooks, oldest first, with the receiver's answers.
    await rows.nth(older).click();
    await page.waitForURL(`**/console/messages/${encodeURIComponent(messageId!)}`);
    const crm = page.locator('article.delivery').filter({ has: page.getByRole('heading', { name: 'crm-hooks', exact: true }) });
    const attempts = crm.locator('li.attempt');
    await waitShown(attempts.nth(1), 'two attempts on the crm-hooks timeline', DEADLINE_MS);
    expect(await attempts.evaluateAll((items) => items.map((item) => [item.getAttribute('data-attempt'), item.getAttribute('data-outcome'), item.getAttribute('data-status')]))).toEqual([
      ['1', 'retry', '503'],
      ['2', 'delivered', '200'],
    ]);
    expect(await attempts.nth(0).innerText()).toContain('try again later');
    expect(await attempts.nth(1).innerText()).toContain('{"received":true}');
    await waitForText(crm.locator('.delivery-head'), 'delivered');
    await waitForText(page.locator('table.routing tr'), /crm-hooks[\s\S]*routed/);
    const legacy = page.locator('article.delivery').filter({ has: page.getByRole('heading', { name: 'legacy-hooks', exact: true }) });
    await waitForText(legacy.locator('.delivery-head'), 'dead');
    await waitForText(page.locator('pre.json'), 'Order Completed');
    await open.screenshot(join(SCREENSHOTS, 'message.png'));

    // The live tail lists the message; a click opens its view.
    await openPage(page, 'Live tail');
    const tailRow = await waitShown(page.locator(`tr[data-message-id="${messageId}"]`), 'the message in the live tail', DEADLINE_MS);
    await open.screenshot(join(SCREENSHOTS, 'live-tail.png'));
    await tailRow.click();
    await page.waitForURL(`**/console/messages/${encodeURIComponent(messageId!)}`);

    // Charts of crm-hooks over the last hour: rate and latency, drawn by uPlot.
    await openPage(page, 'Charts');
    await page.getByLabel('Destination', { exact: true }).selectOption('crm-hooks');
    await waitShown(page.locator('.chart canvas').nth(1), 'both charts drawn', DEADLINE_MS);
    await open.screenshot(join(SCREENSHOTS, 'charts.png'));

    // The retired receiver's 410 made a dead letter.
    await openPage(page, 'Dead letters');
    await waitForText(page.locator(`tr[data-message-id="${messageId}"]`), /legacy-hooks[\s\S]*gone/, DEADLINE_MS);
    await open.screenshot(join(SCREENSHOTS, 'dead-letters.png'));

    expect(open.requestedUrls.filter((url) => url.includes(ADMIN_TOKEN))).toEqual([]);
    expect(open.problems).toEqual([]);
  });
});
