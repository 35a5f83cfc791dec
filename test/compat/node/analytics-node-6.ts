/**
 * Driver for `analytics-node` 6.x (the previous Node library, still widely deployed):
 * makes the six calls of `nodeCalls` and flushes until its queue is empty. The library
 * exposes no request hooks; each message's callback receives the exact object it posted
 * (axios serialises it with JSON.stringify), which is what the manifest reports. Headers
 * stay hidden: by its source they are axios's JSON content type, basic auth with the
 * write key as user name, and `user-agent: analytics-node/<version>`.
 */
import { createRequire } from 'node:module';
import Analytics from 'analytics-node';
import { contentKey, type JsonObject, type Manifest, type PlannedCall, type SentCall, type WireRequest } from '../manifest.js';
import { nodeCalls } from './calls.js';
import type { DriverOptions } from './segment-analytics-node.js';

const { version } = createRequire(import.meta.url)('analytics-node/package.json') as { version: string };

type AxiosFailure = Error & { response?: { status: number; data: unknown } };

function message(call: PlannedCall): Record<string, unknown> {
  const { type: _type, timestamp, ...fields } = call;
  return timestamp === undefined ? fields : { ...fields, timestamp: new Date(timestamp) };
}

export async function runAnalyticsNode6({ endpoint, writeKey, runId }: DriverOptions): Promise<Manifest> {
  const analytics = new Analytics(writeKey, {
    host: endpoint,
    flushAt: 4,
    flushInterval: 200,
    retryCount: 1,
    // Without a handler a failed automatic flush is an unhandled rejection; the failure
    // also reaches every message's callback, which records it.
    errorHandler: () => undefined,
  });
  const path = new URL(`${analytics.host}${analytics.path}`).pathname;
  const requests = new Map<Analytics.Payload, WireRequest>();
  const errors: string[] = [];

  const recordRequest = (error: AxiosFailure | undefined, payload: Analytics.Payload): void => {
    if (requests.has(payload)) return;
    const entry: WireRequest = { path, headers: null, body: JSON.parse(JSON.stringify(payload)) as JsonObject };
    if (error) {
      entry.error = error.message;
      if (error.response) {
        entry.status = error.response.status;
        entry.response = typeof error.response.data === 'string' ? error.response.data : JSON.stringify(error.response.data);
      }
      errors.push(`request failed: ${error.message}`);
    }
    requests.set(payload, entry);
  };

  const sent = nodeCalls('node6', runId).map(
    (call) =>
      new Promise<SentCall>((resolve) => {
        analytics[call.type](message(call), (error, payload) => {
          recordRequest(error, payload);
          const onWire = payload.batch.find((candidate) => contentKey(candidate) === contentKey(call));
          resolve({ ...call, messageId: typeof onWire?.messageId === 'string' ? onWire.messageId : '' });
        });
      }),
  );
  while (analytics.queue.length > 0) await analytics.flush();
  const calls = await Promise.all(sent);
  return { client: 'analytics-node', library: { name: 'analytics-node', version }, calls, requests: [...requests.values()], errors };
}
