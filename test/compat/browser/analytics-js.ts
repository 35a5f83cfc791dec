/**
 * Driver for analytics.js — `@segment/analytics-next`, Segment's browser library — in a real
 * browser: Debian's Chromium through the harness's `openBrowser`. A loopback server serves
 * `analytics-js.html` and the library's UMD bundle (with any chunk it loads lazily) from
 * node_modules, and the page loads it with inline settings pointing its Segment.io
 * destination at ingest, so the page requests nothing from the internet and never the
 * settings URL, which carries the write key (`/v1/projects/<writeKey>/settings`).
 *
 * The page makes the six calls of `nodeCalls` through analytics.js's own signatures; each
 * request the browser sends to ingest is recorded from Chromium's side (path, headers, body,
 * answer), and the run ends once every message is in an answered request. Two ways to
 * deliver: the library's default, one request per call to `/v1/i`, `/v1/t`, … with the
 * write key in the body and in basic auth; and its batching strategy, posting to `/v1/b`.
 */
import { readFile } from 'node:fs/promises';
import { createServer, type ServerResponse } from 'node:http';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Request } from 'playwright-core';
import { eventually } from '@tributary/test/harness';
import { openBrowser } from '@tributary/test/harness/browser';
import { describeAuthorization, redactBody, type JsonObject, type JsonValue, type Manifest, type PlannedCall, type SentCall, type WireRequest } from '../manifest.js';
import { nodeCalls } from '../node/calls.js';
import type { DriverOptions } from '../node/segment-analytics-node.js';

export type AnalyticsJsDelivery = 'per-call' | 'batching';

const require = createRequire(import.meta.url);
const PACKAGE_DIR = dirname(require.resolve('@segment/analytics-next/package.json'));
const { version } = require('@segment/analytics-next/package.json') as { version: string };
/** The UMD build: `index.js` (the `AnalyticsNext` global) and the chunks it loads lazily. */
const BUNDLE_DIR = join(PACKAGE_DIR, 'dist', 'umd');
/** Where the UMD build looks for its chunks below the CDN URL it is given. */
const BUNDLE_PATH = '/analytics-next/bundles/';
const PAGE_FILE = fileURLToPath(new URL('./analytics-js.html', import.meta.url));

/** The UMD build reports itself as the web build (`next-`); the npm import would say `npm:next-`. */
const LIBRARY = { name: 'analytics.js', version: `next-${version}` };

/** How long the page has to send every call and have it answered, retries included. */
const DELIVERY_TIMEOUT_MS = 30_000;

interface AssetServer {
  origin: string;
  close(): Promise<void>;
}

function answer(response: ServerResponse, status: number, contentType: string, body: string | Buffer): void {
  response.writeHead(status, { 'content-type': contentType, 'cache-control': 'no-store' });
  response.end(body);
}

/** The page at `/` and the bundle's files below BUNDLE_PATH, on 127.0.0.1 only. */
async function serveAssets(): Promise<AssetServer> {
  const page = await readFile(PAGE_FILE);
  const server = createServer((request, response) => {
    const path = new URL(request.url ?? '/', 'http://127.0.0.1').pathname;
    if (request.method !== 'GET') return answer(response, 405, 'text/plain', 'GET only');
    if (path === '/') return answer(response, 200, 'text/html; charset=utf-8', page);
    const file = path.startsWith(BUNDLE_PATH) ? path.slice(BUNDLE_PATH.length) : '';
    // A plain file name: nothing outside the bundle directory can be named.
    if (!/^[\w.-]+\.js$/.test(file)) return answer(response, 404, 'text/plain', `not served: ${path}`);
    readFile(join(BUNDLE_DIR, file)).then(
      (body) => answer(response, 200, 'text/javascript; charset=utf-8', body),
      () => answer(response, 404, 'text/plain', `no such bundle file: ${file}`),
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  const { port } = server.address() as AddressInfo;
  return {
    origin: `http://127.0.0.1:${port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The message ids a request body carries: a batch's, or the single message's (the short paths). */
function messageIdsIn(body: JsonObject): string[] {
  const messages: JsonValue[] = Array.isArray(body.batch) ? body.batch : [body];
  return messages.flatMap((message) => (isObject(message) && typeof message.messageId === 'string' ? [message.messageId] : []));
}

function parseBody(text: string | null): JsonObject {
  try {
    const parsed = JSON.parse(text ?? '') as JsonValue;
    if (isObject(parsed)) return redactBody(parsed);
  } catch {
    // reported below, as the body the suite could not read
  }
  return { unreadableBody: text ?? '(none)' };
}

/** Chromium's headers for the request, lower-case, the credentials described rather than shown. */
function describeHeaders(headers: Record<string, string>, writeKey: string): Record<string, string> {
  return Object.fromEntries(
    Object.entries(headers).map(([name, value]) => {
      const lower = name.toLowerCase();
      return [lower, lower === 'authorization' ? describeAuthorization(value, writeKey) : value];
    }),
  );
}

async function recordAnswer(request: Request, entry: WireRequest, writeKey: string): Promise<void> {
  // Null when the request failed (refused connection, CORS): then the failure says why.
  const response = await request.response();
  try {
    entry.headers = describeHeaders(await request.allHeaders(), writeKey);
  } catch {
    entry.headers = describeHeaders(request.headers(), writeKey);
  }
  if (!response) {
    entry.error = request.failure()?.errorText ?? 'no answer';
    return;
  }
  entry.status = response.status();
  try {
    entry.response = await response.text();
  } catch (error) {
    entry.response = `(answer not readable: ${(error as Error).message})`;
  }
}

/**
 * The call as analytics.js sends it. A page has one visitor: every message carries the user
 * the plan identifies first and the anonymous id the page set, whatever the call named. A page
 * call's properties are the page's own (path, referrer, search, title, url) under the
 * caller's, plus its category and name (analytics-next's addPageContext and page factory).
 */
function asSent(call: PlannedCall, visitor: { userId: string; anonymousId: string }, pageSearch: string): PlannedCall {
  const sent: PlannedCall = { ...call, userId: visitor.userId, anonymousId: visitor.anonymousId };
  if (call.type === 'page') {
    sent.properties = {
      search: pageSearch,
      ...call.properties,
      ...(call.category === undefined ? {} : { category: call.category }),
      ...(call.name === undefined ? {} : { name: call.name }),
    };
  }
  return sent;
}

/** The visitor the plan describes: the user its identify names and the anonymous id it uses; every call must fit. */
function visitorOf(calls: PlannedCall[]): { userId: string; anonymousId: string } {
  const userId = calls.find((call) => call.type === 'identify')?.userId;
  const anonymousId = calls.find((call) => call.anonymousId !== undefined)?.anonymousId;
  if (userId === undefined || anonymousId === undefined) throw new Error('the plan names no identified user or no anonymous id');
  for (const call of calls) {
    if ((call.userId ?? userId) !== userId || (call.anonymousId ?? anonymousId) !== anonymousId) {
      throw new Error(`the ${call.type} call names another visitor; a page sends every call as its one visitor`);
    }
  }
  if (calls[0]?.type !== 'identify') throw new Error('the plan must identify the user first: analytics.js adds the user id from then on');
  return { userId, anonymousId };
}

interface PageResult {
  messageIds: string[];
  errors: string[];
}

function isPageResult(value: unknown): value is PageResult {
  return (
    isObject(value) &&
    Array.isArray(value.messageIds) &&
    value.messageIds.every((id) => typeof id === 'string') &&
    Array.isArray(value.errors) &&
    value.errors.every((error) => typeof error === 'string')
  );
}

/** What `window.tributaryCompat` in analytics-js.html offers; the page is plain JavaScript. */
interface CompatPage {
  tributaryCompat: { run(input: unknown): Promise<unknown> };
}

export async function runAnalyticsJs({ endpoint, writeKey, runId }: DriverOptions, delivery: AnalyticsJsDelivery): Promise<Manifest> {
  const ingest = new URL(endpoint);
  const planned = nodeCalls(delivery === 'batching' ? 'ajs-batch' : 'ajs', runId);
  const visitor = visitorOf(planned);

  const segmentIo: JsonObject = { apiKey: writeKey, apiHost: `${ingest.host}/v1`, protocol: ingest.protocol.replace(/:$/, '') };
  if (delivery === 'batching') {
    // Three per request, so the six calls make two; two retries keep a refusing ingest from
    // holding the run for minutes.
    segmentIo.deliveryStrategy = { strategy: 'batching', config: { size: 3, timeout: 200, maxRetries: 2 } };
  }
  const assets = await serveAssets();
  const browser = await openBrowser().catch(async (error: unknown) => {
    await assets.close();
    throw error;
  });
  const requests: WireRequest[] = [];
  const recordings: Promise<void>[] = [];
  const errors: string[] = [];
  let unanswered = 0;
  let closing = false;
  try {
    const { page } = browser;
    page.on('console', (message) => {
      if (message.type() === 'error') errors.push(`browser console: ${message.text()}`);
    });
    page.on('request', (request) => {
      const url = new URL(request.url());
      if (request.method() !== 'POST' || url.origin !== ingest.origin) return;
      const entry: WireRequest = { path: url.pathname, headers: null, body: parseBody(request.postData()) };
      requests.push(entry);
      unanswered++;
      recordings.push(
        recordAnswer(request, entry, writeKey)
          .catch((error: unknown) => {
            entry.error = closing ? 'still open when the run ended and the browser closed' : `the suite could not read the answer: ${(error as Error).message}`;
          })
          .finally(() => unanswered--),
      );
    });

    const pageUrl = `${assets.origin}/`;
    await page.goto(pageUrl);
    const settings: JsonObject = {
      writeKey,
      cdnURL: assets.origin,
      // Inline, as a self-hosted site gives them: otherwise the library fetches them from
      // <cdnURL>/v1/projects/<writeKey>/settings. A sample rate of 0 turns off the library's
      // own telemetry, which would go to Segment.
      cdnSettings: { integrations: { 'Segment.io': segmentIo }, metrics: { sampleRate: 0 } },
    };
    // Typed as unknown for playwright: its argument type does not resolve the recursive JsonValue.
    const input: unknown = { settings, anonymousId: visitor.anonymousId, calls: planned };
    const result: unknown = await page.evaluate((run) => (globalThis as unknown as CompatPage).tributaryCompat.run(run), input);
    if (!isPageResult(result)) throw new Error(`the page's run returned ${JSON.stringify(result)}`);
    errors.push(...result.errors);

    // The batching strategy sends after its timeout, and a refused request is retried: wait
    // until every message is in a request that was answered (or failed), and none is open.
    const answeredIds = (): Set<string> =>
      new Set(requests.filter((request) => request.status !== undefined || request.error !== undefined).flatMap((request) => messageIdsIn(request.body)));
    await eventually(
      () => unanswered === 0 && result.messageIds.every((id) => answeredIds().has(id)),
      'analytics.js to send every call and ingest to answer',
      DELIVERY_TIMEOUT_MS,
    ).catch((error: unknown) => {
      const missing = result.messageIds.filter((id) => !answeredIds().has(id));
      errors.push(`${(error as Error).message}: ${unanswered} requests open, never in an answered request: ${missing.join(', ') || 'none'}`);
    });
    errors.push(...browser.problems);

    const pageSearch = new URL(pageUrl).search;
    const calls: SentCall[] = planned.map((call, index) => ({ ...asSent(call, visitor, pageSearch), messageId: result.messageIds[index] ?? '' }));
    return {
      client: `analytics.js (@segment/analytics-next ${version}) in Chromium, ${delivery === 'batching' ? 'batching' : 'one request per call'}`,
      library: LIBRARY,
      calls,
      requests,
      errors,
      requestedUrls: [...browser.requestedUrls],
    };
  } finally {
    closing = true;
    await browser.close();
    // A retry still open has failed now: its entry is complete before the manifest is read.
    await Promise.allSettled(recordings);
    await assets.close();
  }
}
