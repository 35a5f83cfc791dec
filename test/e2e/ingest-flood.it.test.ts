/**
 * One source floods ingest itself: 64 connections posting 476 KB batches (59 events with
 * 8 KB properties each) back to back for 20 s — about 25 MB/s, all of ingest's main thread —
 * while another source sends a one-event request every 100 ms. Nothing is wrong with Kafka,
 * so nothing is refused; the question is how long the other source waits. Before sources took
 * turns at ingest's parsing (fair-turns.ts) and at its transactions (produce-batcher.ts), and
 * before transactions were capped at 1 MB, its requests were answered at p50 0.8–1.1 s (up to
 * 3.4 s) and its events delivered at p50 0.9–1.3 s. Through all four services, with raw HTTP
 * for the flood (a client nobody tuned) and the healthy source's events delivered to a real
 * receiver.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, uniqueNamespace } from '@tributary/test/harness';
import { Receiver, RetryPipeline } from './retry-pipeline.js';

const FLOOD_CONNECTIONS = 64;
const FLOOD_SECONDS = 20;
/** The flood's first seconds meet cold code in every service (a broker just started, too): measured after them. */
const WARM_UP_MS = 4_000;
const PROPERTY_BYTES = 8_000;
const HEALTHY_INTERVAL_MS = 100;

const basicAuth = (writeKey: string) => `Basic ${Buffer.from(`${writeKey}:`).toString('base64')}`;
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

describe('a source flooding ingest beside another', () => {
  const pipeline = new RetryPipeline(uniqueNamespace('e2e-iflood'), { RETRY_LADDER: '10s,1m', RETRY_WINDOW: '3m' });
  const healthy = new Receiver(() => 200);
  const sink = new Receiver(() => 200);

  beforeAll(async () => {
    await healthy.start();
    await sink.start();
    await pipeline.start();
  });

  afterAll(async () => {
    await pipeline.stop();
    await healthy.stop();
    await sink.stop();
  });

  it('answers and delivers the other source’s events without waiting behind the flood', { timeout: 180_000 }, async () => {
    const healthyKey = await pipeline.connect('healthy', healthy.url);
    const floodKey = `wk_flood_${pipeline.namespace}`;
    await pipeline.admin('PUT', '/sources/flood', { name: 'Flood', writeKey: floodKey });
    await pipeline.admin('PUT', '/destinations/sink', { type: 'webhooks', sources: ['flood'], settings: { webhooks: [{ url: sink.url }] } });
    // The config reaches ingest, the router and the dispatcher within a second.
    await new Promise((resolve) => setTimeout(resolve, 1_500));

    // No messageId: ingest gives each event its own, so one body serves every request.
    const pad = 'x'.repeat(PROPERTY_BYTES);
    const floodBody = JSON.stringify({
      batch: Array.from({ length: 59 }, (_, index) => ({ type: 'track', userId: `flood-${index}`, event: 'Big Event', properties: { pad } })),
    });
    const post = (path: string, writeKey: string, body: string) =>
      fetch(`${pipeline.ingest.url}/v1/${path}`, { method: 'POST', headers: { authorization: basicAuth(writeKey), 'content-type': 'application/json' }, body });
    const floodStarted = Date.now();
    const until = floodStarted + FLOOD_SECONDS * 1_000;
    const floodStatuses: number[] = [];
    /** How long each flood request sent after the warm-up waited for its answer. */
    const floodAnswered: number[] = [];
    const flood = Array.from({ length: FLOOD_CONNECTIONS }, async () => {
      while (Date.now() < until) {
        const at = Date.now();
        const response = await post('batch', floodKey, floodBody);
        await response.arrayBuffer();
        floodStatuses.push(response.status);
        if (at >= floodStarted + WARM_UP_MS) floodAnswered.push(Date.now() - at);
      }
    });

    const sent: Array<{ messageId: string; at: number; answeredMs: number; status: number }> = [];
    await new Promise((resolve) => setTimeout(resolve, WARM_UP_MS));
    while (Date.now() < until) {
      const at = Date.now();
      const messageId = `healthy-${pipeline.namespace}-${sent.length}`;
      const response = await post('track', healthyKey, JSON.stringify({ userId: 'someone', event: 'Healthy Event', messageId }));
      await response.arrayBuffer();
      sent.push({ messageId, at, answeredMs: Date.now() - at, status: response.status });
      await new Promise((resolve) => setTimeout(resolve, HEALTHY_INTERVAL_MS));
    }
    await Promise.all(flood);

    expect(sent.every(({ status }) => status === 200)).toBe(true);
    const delivered = await eventually(
      () => sent.every(({ messageId }) => healthy.attemptsFor(messageId).length > 0) && sent.map(({ messageId, at }) => healthy.attemptsFor(messageId)[0]!.at - at),
      'every event of the healthy source delivered',
      60_000,
    );
    const answered = sent.map(({ answeredMs }) => answeredMs);
    const accepted = floodStatuses.filter((status) => status === 200).length;
    console.log(
      `healthy source beside ${FLOOD_CONNECTIONS} connections of ${floodBody.length}-byte batches (${accepted} accepted, ${floodStatuses.length - accepted} refused): ` +
        `${sent.length} requests answered p50 ${median(answered)} ms, max ${Math.max(...answered)} ms; delivered p50 ${median(delivered)} ms, max ${Math.max(...delivered)} ms; ` +
        `the flood's ${floodAnswered.length} requests after the warm-up answered p50 ${median(floodAnswered)} ms`,
    );
    // Runs after the change: answered p50 112-299 ms, delivered p50 201-765 ms (the machine's
    // two cores are all the flood's, and what is delivered crosses them behind 25 MB/s of it).
    // Before: answered p50 0.8-1.3 s, delivered p50 0.9-1.4 s — as long as the flood's own
    // requests, for a request that waits behind the flood waits as long as one of the flood's.
    // Measured against the flood's own wait, not the clock: the other source is answered in less
    // than half the time a flood request takes, and its events are through all four services
    // before a flood request sent at the same moment would have had its answer.
    expect(floodAnswered.length).toBeGreaterThan(0);
    expect(median(answered)).toBeLessThan(median(floodAnswered) / 2);
    expect(median(delivered)).toBeLessThan(median(floodAnswered));
    // The flood itself is served: it waits its turn (291-1,429 batches in 20 s, by the machine’s load).
    expect(accepted).toBeGreaterThan(100);
  });
});
