/**
 * The web console in a real browser (Debian's Chromium through playwright-core) against the
 * real services and Kafka: ingest serves it at /console/, the sign-in refuses a wrong token
 * and keeps the right one for the tab only, the sources-and-destinations page shows a
 * destination's circuit state and its settings without secrets, and the dead-letters page
 * lists a message a receiver refused and replays it — the replay reaching the receiver.
 * The token never appears in a URL and the page raises no CSP violation.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, REPO_ROOT, uniqueNamespace } from '@tributary/test/harness';
import { openBrowser, type TestBrowser } from '@tributary/test/harness/browser';
import { openPage, signIn, waitForText, waitShown } from './console-pages.js';
import { ADMIN_TOKEN, RetryPipeline } from './retry-pipeline.js';

const SCREENSHOTS = join(REPO_ROOT, '.tributary', 'test-logs', 'console');
const SHARED_SECRET = 'shared-secret-not-for-the-page';
const HEADER_SECRET = 'header-secret-not-for-the-page';
const URL_SECRET = 'url-secret-not-for-the-page';

/** Refuses a message's first request with 400 (a dead letter at once), accepts every later one. */
class RefuseOnceReceiver {
  readonly statuses = new Map<string, number[]>();
  private server: Server | undefined;
  url = '';

  async start(): Promise<void> {
    this.server = createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        const { messageId } = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { messageId: string };
        const seen = this.statuses.get(messageId) ?? [];
        const status = seen.length === 0 ? 400 : 200;
        this.statuses.set(messageId, [...seen, status]);
        response.writeHead(status, { 'content-type': 'application/json' }).end(status === 400 ? '{"error":"unknown plan"}' : '{"ok":true}');
      });
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/hooks?token=${URL_SECRET}`;
  }

  async stop(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise((resolve) => this.server?.close(resolve));
  }
}

describe('web console', () => {
  const pipeline = new RetryPipeline(uniqueNamespace('e2e-console'), { RETRY_LADDER: '100ms,200ms', RETRY_WINDOW: '1m' });
  const receiver = new RefuseOnceReceiver();
  let browser: TestBrowser;

  beforeAll(async () => {
    await receiver.start();
    await pipeline.start();
    browser = await openBrowser();
  });

  afterAll(async () => {
    await browser?.close();
    await pipeline.stop();
    await receiver.stop();
  });

  it('signs in, shows destinations with their circuit state, and lists and replays dead letters', { timeout: 120_000 }, async () => {
    const writeKey = `wk_${pipeline.namespace}`;
    await pipeline.admin('PUT', '/sources/web', { name: 'Web site', writeKey });
    await pipeline.admin('PUT', '/destinations/crm-hooks', {
      name: 'CRM hooks',
      type: 'webhooks',
      sources: ['web'],
      settings: { sharedSecret: SHARED_SECRET, webhooks: [{ url: receiver.url, headers: { Authorization: `Bearer ${HEADER_SECRET}`, 'X-Team': 'growth' } }] },
    });
    const [messageId] = await pipeline.track(writeKey, 1);
    await eventually(() => receiver.statuses.get(messageId!)?.length === 1, 'the refused first request', 20_000);
    const { page } = browser;

    // /console redirects to /console/, which asks for the token; a wrong one is refused there.
    await page.goto(`${pipeline.ingest.url}/console`);
    expect(new URL(page.url()).pathname).toBe('/console/');
    await page.getByLabel('Admin token').fill('not-the-admin-token');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await waitForText(page.getByRole('alert'), 'the admin token is not valid');

    await signIn(page, pipeline.ingest.url, ADMIN_TOKEN);
    const row = page.locator('tr[data-destination="crm-hooks"]');
    await waitForText(row, 'CRM hooks');
    await waitForText(row.locator('td.circuit'), 'closed');
    await waitForText(page.locator('table.grid'), 'Web site');
    await row.getByRole('button', { name: /CRM hooks/ }).click();
    const details = await waitForText(page.locator('tr.details'), 'X-Signature (HMAC-SHA1)');
    expect(await details.innerText()).toContain('Authorization, X-Team (values not shown)');
    const shown = await page.content();
    for (const secret of [SHARED_SECRET, HEADER_SECRET, URL_SECRET, writeKey]) expect(shown, 'a secret on the page').not.toContain(secret);
    await browser.screenshot(join(SCREENSHOTS, 'destinations.png'));

    // The refused message is a dead letter: listed, then replayed after a dry run says what would go.
    await openPage(page, 'Dead letters');
    const letter = await waitShown(page.locator(`tr[data-dead-letter][data-message-id="${messageId}"]`), 'the dead letter listed', 20_000);
    expect(await letter.innerText()).toMatch(/crm-hooks[\s\S]*http_status[\s\S]*400/);
    await page.getByLabel('Destination', { exact: true }).last().selectOption('crm-hooks');
    await page.getByRole('button', { name: 'Check what would be replayed' }).click();
    await waitForText(page.locator('.confirm'), '1 dead letter of crm-hooks would be replayed.');
    await browser.screenshot(join(SCREENSHOTS, 'dead-letters.png'));
    await page.getByRole('button', { name: 'Replay 1' }).click();
    await waitForText(page.getByRole('status'), 'Replayed 1 dead letter of crm-hooks.');
    await eventually(() => receiver.statuses.get(messageId!)?.[1] === 200, 'the replayed delivery accepted by the receiver', 20_000);
    // The list reloads after the replay and says when the dead letter was replayed.
    await waitForText(page.locator(`tr[data-dead-letter][data-message-id="${messageId}"] td`).nth(7), /^\d{4}-\d\d-\d\d \d\d:\d\d/);

    // A reload stays signed in (sessionStorage); a token the API refuses brings the sign-in back.
    await page.reload();
    await waitShown(page.locator(`tr[data-dead-letter][data-message-id="${messageId}"]`), 'the dead letter after a reload');
    // A string, not a function: this workspace compiles without the DOM's types.
    await page.evaluate("sessionStorage.setItem('tributary.adminToken', 'revoked-token')");
    await page.reload();
    await waitForText(page.getByRole('alert'), 'Signed out: the admin token is not valid');
    expect(await page.evaluate("sessionStorage.getItem('tributary.adminToken')")).toBeNull();

    expect(browser.requestedUrls.filter((url) => url.includes(ADMIN_TOKEN))).toEqual([]);
    expect(browser.requestedUrls.some((url) => url.includes('/admin/v1/destination-health'))).toBe(true);
    expect(browser.problems).toEqual([]);
  });
});
