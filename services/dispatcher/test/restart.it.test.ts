/**
 * Offsets are committed only once outcomes are durable: a graceful stop commits what was
 * settled (the next process sends nothing twice), and a crash loses nothing (deliveries
 * whose outcome was never recorded are attempted again by the next process).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { metricValue, type RunningService, startService, uniqueNamespace } from '@tributary/test/harness';
import { eventually, TestPipeline, webhooksDestination } from './pipeline.js';
import { startReceiver, type Behaviour, type Receiver } from './receivers.js';

let pipeline: TestPipeline;
let receiver: Receiver;
let hang = false;
const running: RunningService[] = [];

const behaviour: Behaviour = ({ path }) => (path.startsWith('/flaky') && hang ? 'hang' : 200);

async function startDispatcher(): Promise<RunningService> {
  const service = await startService('dispatcher', { env: pipeline.env({ DELIVERY_ALLOW_PRIVATE_NETWORKS: 'true', WEBHOOK_TIMEOUT: '30s' }) });
  running.push(service);
  return service;
}

function countsByBody(path: string): Map<string, number> {
  const counts = new Map<string, number>();
  for (const request of receiver.requests.filter((r) => r.path === path)) {
    const body = request.body.toString('utf8');
    counts.set(body, (counts.get(body) ?? 0) + 1);
  }
  return counts;
}

beforeAll(async () => {
  receiver = await startReceiver(behaviour);
  pipeline = new TestPipeline(uniqueNamespace('restart'), { delaysMs: [1000], windowMs: 60_000 });
  await pipeline.start();
  await pipeline.putDestination(webhooksDestination('steady', [{ url: receiver.url('/steady') }]));
  await pipeline.putDestination(webhooksDestination('flaky', [{ url: receiver.url('/flaky') }]));
});

afterAll(async () => {
  for (const service of running) await service.kill();
  await pipeline?.stop();
  await receiver?.close();
});

describe('offsets across restarts', () => {
  it('after a graceful stop the next process continues where the last settled delivery left off', async () => {
    const first = await startDispatcher();
    const early = await pipeline.deliverMany(Array.from({ length: 20 }, (_, n) => ({ destinationId: 'steady', body: { type: 'track', event: `early ${n}` } })));
    await eventually(() => countsByBody('/steady').size === early.length, 'the first 20 deliveries');
    expect(await first.stop()).toBe(0);

    const late = await pipeline.deliverMany(Array.from({ length: 10 }, (_, n) => ({ destinationId: 'steady', body: { type: 'track', event: `late ${n}` } })));
    const second = await startDispatcher();
    await eventually(() => countsByBody('/steady').size === early.length + late.length, 'the last 10 deliveries');
    // The second process settles exactly the ten new deliveries: nothing before them is read again.
    const settledBySecond = await eventually(async () => {
      const total = await metricValue(second.url, 'tributary_dispatcher_deliveries_total');
      return total >= late.length && total;
    }, 'the second process to settle its deliveries');
    expect(settledBySecond).toBe(late.length);
    expect([...countsByBody('/steady').values()].every((count) => count === 1)).toBe(true);
    expect(await second.stop()).toBe(0);
  });

  // The crashed member stays in the group until its session times out (30 s), so the next
  // process gets the partitions only then.
  it('after a crash, deliveries whose outcome was not recorded are attempted again', { timeout: 120_000 }, async () => {
    hang = true;
    const crashing = await startDispatcher();
    const deliveries = await pipeline.deliverMany(Array.from({ length: 10 }, (_, n) => ({ destinationId: 'flaky', body: { type: 'track', event: `in flight ${n}` } })));
    // Every request is in flight at the receiver, which does not answer.
    await eventually(() => countsByBody('/flaky').size === deliveries.length, 'all requests in flight');
    await crashing.kill();

    hang = false;
    const next = await startDispatcher();
    await eventually(
      () => deliveries.every((delivery) => (countsByBody('/flaky').get(delivery.body.toString('utf8')) ?? 0) >= 2),
      'every delivery sent again',
      90_000,
    );
    await eventually(
      async () => (await metricValue(next.url, 'tributary_dispatcher_deliveries_total', { result: 'delivered' })) >= deliveries.length,
      'the next process to record them as delivered',
    );
    expect(pipeline.deadLetters.filter(({ value }) => value.delivery.destinationId === 'flaky')).toEqual([]);
  });
});
