/**
 * A neighbour that never passes ingest: a producer writing a backfill straight to the ingest
 * topic — 100,000 records in a few seconds, in every partition — while another source sends
 * one event every half second through the HTTP API. Ingest's share of the main lane never sees
 * the backfill; the router's does (main-lane-share.ts): what the backfill writes past its
 * ROUTER_SOURCE_RATE is copied to the overflow lane in a few large transactions and routed from
 * there, so the healthy source's records behind it in the partitions are reached within a
 * few seconds: the slowest of them 1.7–2.7 s in six runs on a fast host; 2.8 and 4.7 s in two on
 * a slow one, where the producer itself took 5.5 and 6.7 s to write the backfill. Routed in order instead
 * (ROUTER_SOURCE_RATE=0), the same backfill held them up to 7.6–15.9 s in seven runs of eight
 * (3.9 s in one: how far behind the router falls depends on how fast the producer writes);
 * moved, but in transactions of ROUTER_MAX_BATCH records, 6.6–9.3 s. Every backfilled message
 * is still delivered, once.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { IngestMessage } from '@tributary/schemas';
import { createProducer } from '@tributary/shared';
import { eventually, metricValue, testCodec, testKafka, uniqueNamespace } from '@tributary/test/harness';
import { CountingReceiver } from '../fault/fault-pipeline.js';
import { Receiver, RetryPipeline } from './retry-pipeline.js';

const BACKFILL = 100_000;
const TRICKLE_MESSAGES = 40;
const TRICKLE_INTERVAL_MS = 500;

function backfilled(messageId: string, index: number): IngestMessage {
  const now = Date.now();
  return {
    messageId,
    type: 'track',
    sourceId: 'bulk',
    userId: `user-${index % 1000}`,
    anonymousId: `anon-${index % 1000}`,
    timestamp: now,
    originalTimestamp: null,
    sentAt: null,
    receivedAt: now,
    event: 'Backfilled',
    name: null,
    category: null,
    groupId: null,
    previousId: null,
    properties: JSON.stringify({ index, plan: 'pro', amount: 12.5 }),
    traits: null,
    context: '{"library":{"name":"backfill","version":"1"}}',
    integrations: null,
  };
}

describe('a backfill written straight to the ingest topic beside a healthy source', () => {
  const pipeline = new RetryPipeline(uniqueNamespace('e2e-backfill'), { RETRY_LADDER: '10s,1m', RETRY_WINDOW: '3m' });
  // Counts by messageId: the e2e Receiver keeps every attempt, too much for 100,000.
  const bulk = new CountingReceiver();
  const healthy = new Receiver(() => 200);

  beforeAll(async () => {
    await bulk.start();
    await healthy.start();
    await pipeline.start();
  });

  afterAll(async () => {
    await pipeline.stop();
    await bulk.stop();
    await healthy.stop();
  });

  it('reaches the healthy source’s events behind it within seconds, and delivers the backfill once', { timeout: 300_000 }, async () => {
    const healthyKey = await pipeline.connect('healthy', healthy.url);
    await pipeline.admin('PUT', '/sources/bulk', { name: 'Bulk', writeKey: `wk_bulk_${pipeline.namespace}` });
    await pipeline.admin('PUT', '/destinations/bulk', { type: 'webhooks', sources: ['bulk'], settings: { webhooks: [{ url: bulk.url }] } });
    await new Promise((resolve) => setTimeout(resolve, 1_500));

    const codec = testCodec();
    await codec.register(pipeline.topics.ingest, 'ingest');
    const producer = createProducer(testKafka());
    await producer.connect();
    const backfillStarted = Date.now();
    const backfill = (async () => {
      for (let first = 0; first < BACKFILL; first += 1000) {
        const messages = Array.from({ length: Math.min(1000, BACKFILL - first) }, (_, offset) => {
          const message = backfilled(`bf-${pipeline.namespace}-${first + offset}`, first + offset);
          return { key: message.anonymousId, value: codec.encode(pipeline.topics.ingest, message) };
        });
        await producer.send({ topic: pipeline.topics.ingest, messages });
      }
      return Date.now() - backfillStarted;
    })();
    const sent: Array<{ messageId: string; at: number }> = [];
    for (let tick = 0; tick < TRICKLE_MESSAGES; tick++) {
      const at = Date.now();
      const [messageId] = await pipeline.track(healthyKey, 1);
      sent.push({ messageId: messageId!, at });
      await new Promise((resolve) => setTimeout(resolve, TRICKLE_INTERVAL_MS));
    }
    const backfillWriteMs = await backfill;
    await producer.disconnect();

    const latencies = await eventually(
      () => sent.every(({ messageId }) => healthy.attemptsFor(messageId).length > 0) && sent.map(({ messageId, at }) => healthy.attemptsFor(messageId)[0]!.at - at),
      'every healthy message delivered',
      120_000,
    );
    const sorted = [...latencies].sort((a, b) => a - b);
    const max = sorted[sorted.length - 1]!;
    const routerUrl = pipeline.services.get('router')!.url;
    const moved = await metricValue(routerUrl, 'tributary_router_diverted_total', { source: 'bulk' });
    const movedHealthy = await metricValue(routerUrl, 'tributary_router_diverted_total', { source: 'web' });
    await eventually(() => bulk.arrivals.size >= BACKFILL, 'the backfill delivered', 180_000);
    console.info(
      `[backfill] ${BACKFILL} records written straight to the ingest topic, ${moved} moved to the overflow lane by the router; ` +
        `healthy source's events p50 ${sorted[Math.floor(sorted.length / 2)]} ms, p90 ${sorted[Math.floor(sorted.length * 0.9)]} ms, max ${max} ms; ` +
        `backfill written in ${backfillWriteMs} ms, delivered ${bulk.arrivals.size} after ${Date.now() - backfillStarted} ms, repeated ${bulk.repeats.length}`,
    );
    expect(moved, 'the router moved the backfill past its share').toBeGreaterThan(BACKFILL / 2);
    expect(movedHealthy, 'nothing of the healthy source was moved').toBe(0);
    // The router copies what is ahead of a healthy record at least as fast as one producer
    // writes it, so the wait is bounded by the backfill's own writing time, measured in this
    // run: on a slow or busy host the producer slows down with the router. Routed in order,
    // the wait is the router's routing time for the backfill, several times its writing time.
    expect(max).toBeLessThan(Math.max(5_000, backfillWriteMs));
    expect(bulk.arrivals.size).toBe(BACKFILL);
    expect(bulk.repeats.length).toBe(0);
  });
});
