/**
 * Driver for `@segment/analytics-node` (the current Node library): makes the six calls
 * of `nodeCalls`, closes the client (which flushes), and reports what went on the wire
 * through the library's own `http_request` / `http_response` events.
 */
import { Analytics, type Context, type TrackParams } from '@segment/analytics-node';
import {
  describeAuthorization,
  redactBody,
  type JsonObject,
  type Manifest,
  type PlannedCall,
  type SentCall,
  type WireRequest,
} from '../manifest.js';
import { nodeCalls } from './calls.js';

export interface DriverOptions {
  endpoint: string;
  writeKey: string;
  runId: string;
}

type Callback = (error?: unknown, ctx?: Context) => void;
type Integrations = NonNullable<TrackParams['integrations']>;

/** The library types integrations as switches (or per-destination option objects); the plan sends switches. */
function integrations(call: PlannedCall): Integrations | undefined {
  if (call.integrations === undefined) return undefined;
  const switches: Integrations = {};
  for (const [name, value] of Object.entries(call.integrations)) {
    if (typeof value !== 'boolean') throw new Error(`integration ${name}: the Node plan sends boolean switches only`);
    switches[name] = value;
  }
  return switches;
}

function identity(call: PlannedCall): { userId: string; anonymousId?: string } | { anonymousId: string } {
  if (call.userId !== undefined) return { userId: call.userId, ...(call.anonymousId === undefined ? {} : { anonymousId: call.anonymousId }) };
  if (call.anonymousId !== undefined) return { anonymousId: call.anonymousId };
  throw new Error(`${call.type} call without userId or anonymousId`);
}

function send(analytics: Analytics, call: PlannedCall, callback: Callback): void {
  const common = {
    context: call.context,
    integrations: integrations(call),
    timestamp: call.timestamp === undefined ? undefined : new Date(call.timestamp),
  };
  switch (call.type) {
    case 'identify':
      return analytics.identify({ ...identity(call), ...common, traits: call.traits }, callback);
    case 'track':
      return analytics.track({ ...identity(call), ...common, event: call.event ?? '', properties: call.properties }, callback);
    case 'page':
      return analytics.page({ ...identity(call), ...common, name: call.name, category: call.category, properties: call.properties }, callback);
    case 'screen':
      return analytics.screen({ ...identity(call), ...common, name: call.name, category: call.category, properties: call.properties }, callback);
    case 'group':
      return analytics.group({ ...identity(call), ...common, groupId: call.groupId ?? '', traits: call.traits }, callback);
    case 'alias':
      return analytics.alias({ ...common, userId: call.userId ?? '', previousId: call.previousId ?? '' }, callback);
  }
}

/**
 * The call as this library sends it: like analytics.js, it copies a page's category into
 * the page's properties (analytics-core's page event factory).
 */
function asSent(call: PlannedCall): PlannedCall {
  if (call.type !== 'page' || call.category === undefined) return call;
  return { ...call, properties: { ...call.properties, category: call.category } };
}

export async function runSegmentAnalyticsNode({ endpoint, writeKey, runId }: DriverOptions): Promise<Manifest> {
  // Four events per batch and a short interval: six calls make two requests, quickly.
  // Two retries keep a refusing endpoint from holding the suite for minutes.
  const analytics = new Analytics({ writeKey, host: endpoint, flushAt: 4, flushInterval: 200, maxRetries: 2 });
  const requests: WireRequest[] = [];
  const byBody = new Map<string, WireRequest>();
  const errors: string[] = [];

  analytics.on('http_request', ({ url, headers, body }) => {
    const entry: WireRequest = {
      path: new URL(url).pathname,
      headers: Object.fromEntries(
        Object.entries(headers).map(([name, value]) => {
          const lower = name.toLowerCase();
          return [lower, lower === 'authorization' ? describeAuthorization(value, writeKey) : value];
        }),
      ),
      body: redactBody(JSON.parse(body) as JsonObject),
    };
    requests.push(entry);
    byBody.set(body, entry);
  });
  // The response event carries the request body, not the response's; a retry re-sends
  // with a new sentAt, so the body identifies the attempt.
  analytics.on('http_response', ({ status, statusText, body }) => {
    const entry = byBody.get(body);
    if (entry) {
      entry.status = status;
      entry.response = statusText;
    }
  });
  analytics.on('error', (error) => errors.push(`${error.code}: ${String(error.reason)}`));

  const sent = nodeCalls('node', runId).map(
    (call) =>
      new Promise<SentCall>((resolve) => {
        send(analytics, call, (error, ctx) => {
          if (error) errors.push(`${call.type} callback: ${String(error)}`);
          resolve({ ...asSent(call), messageId: ctx?.event.messageId ?? '' });
        });
      }),
  );
  await analytics.closeAndFlush({ timeout: 30_000 });
  const calls = await Promise.all(sent);
  return { client: '@segment/analytics-node', library: { name: '@segment/analytics-node', version: analytics.VERSION }, calls, requests, errors };
}
