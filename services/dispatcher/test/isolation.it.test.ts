/**
 * Isolation, functionally: a destination that never answers must not hold back a healthy
 * one on the same topic. With small limits, the hanging destination's surplus is deferred
 * to the retry ladder (no request made, no attempt counted, its window started) while
 * every delivery to the healthy destination goes through; deferring again climbs the
 * ladder. (The throughput figure comes from bench/isolation.ts.)
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { metricValue, startService, uniqueNamespace, type RunningService } from '@tributary/test/harness';
import { DEFERRED_ERROR } from '../src/next-step.js';
import { eventually, TestPipeline, webhooksDestination } from './pipeline.js';
import { startReceiver, type Receiver } from './receivers.js';

const ladder = { delaysMs: [1000, 60_000], windowMs: 3_600_000 };

let pipeline: TestPipeline;
let dispatcher: RunningService;
let receiver: Receiver;

beforeAll(async () => {
  receiver = await startReceiver();
  pipeline = new TestPipeline(uniqueNamespace('isol'), ladder);
  await pipeline.start();
  dispatcher = await startService('dispatcher', {
    env: pipeline.env({
      WEBHOOK_TIMEOUT: '5s',
      DELIVERY_ALLOW_PRIVATE_NETWORKS: 'true',
      DELIVERY_MAX_IN_FLIGHT_PER_DESTINATION: '2',
      DELIVERY_MAX_QUEUED_PER_DESTINATION: '4',
      DELIVERY_STALLED_AFTER: '300ms',
    }),
  });
});

afterAll(async () => {
  await dispatcher?.stop();
  await pipeline?.stop();
  await receiver?.close();
});

describe('a hanging destination beside a healthy one', () => {
  it('defers the hanging surplus and delivers everything to the healthy destination', async () => {
    await pipeline.putDestination(webhooksDestination('dead-end', [{ url: receiver.url('/hang') }]));
    await pipeline.putDestination(webhooksDestination('healthy', [{ url: receiver.url('/ok') }]));
    // Steady traffic, in waves: the dispatcher judges a destination as deliveries for it
    // arrive, so it takes traffic after the dead end has stalled to see deferrals.
    const deliveries = [];
    for (let wave = 0; wave < 6; wave++) {
      const items = Array.from({ length: 8 }, (_, index) => ({
        destinationId: index % 2 === 0 ? 'dead-end' : 'healthy',
        body: { type: 'track', event: `isolation-${wave}-${index}` },
      }));
      deliveries.push(...(await pipeline.deliverMany(items)));
      await new Promise((resolve) => setTimeout(resolve, 400));
    }
    const healthy = deliveries.filter((delivery) => delivery.destinationId === 'healthy');
    const hanging = deliveries.filter((delivery) => delivery.destinationId === 'dead-end');

    // Every healthy delivery arrives while the dead end is still holding its two requests.
    await eventually(
      () => healthy.every((delivery) => receiver.requests.some((request) => request.body.equals(delivery.body))),
      'every healthy delivery received',
    );
    const deferred = await eventually(() => {
      const records = hanging
        .flatMap((delivery) => pipeline.retriesFor(delivery.deliveryId))
        .filter((record) => record.delivery.lastError === DEFERRED_ERROR);
      return records.length > 0 && records;
    }, 'the hanging surplus deferred');
    for (const record of deferred) {
      expect(record.tier).toBe('1s');
      expect(record.delivery).toMatchObject({ attempts: 0, lastError: DEFERRED_ERROR });
      expect(record.delivery.firstAttemptAt).not.toBeNull();
    }
    // At most the per-destination limit of requests ever reached the hanging URL at once.
    expect(receiver.requests.filter((request) => request.path === '/hang').length).toBeLessThanOrEqual(2);
    expect(await metricValue(dispatcher.url, 'tributary_dispatcher_deferred_total')).toBeGreaterThanOrEqual(deferred.length);
    expect(pipeline.deadLetters).toEqual([]);
  });

  it('defers a delivery that comes back while its destination still hangs further up the ladder', async () => {
    // One of the deferred deliveries returns from the 1 s tier as the scheduler would send it back.
    const [returning] = await pipeline.deliverMany([
      {
        destinationId: 'dead-end',
        body: { type: 'track', event: 'returning' },
        overrides: { firstAttemptAt: Date.now() - 1500, lastError: DEFERRED_ERROR },
      },
    ]);
    const [record] = await eventually(() => {
      const records = pipeline.retriesFor(returning!.deliveryId);
      return records.length > 0 && records;
    }, 'the returning delivery deferred again');
    expect(record!.tier).toBe('1m');
    expect(record!.delivery.attempts).toBe(0);
  });
});
