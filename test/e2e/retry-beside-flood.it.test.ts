/**
 * Retries share the ladder's tier topics and the retry-scheduler (niced by default): a flood
 * of deliveries to a dead destination — deferred onto the tiers while its circuit is open,
 * moved up again each time they come due with the circuit still open — must not hold back a
 * flaky destination's retries behind it. Through all four services: 20,000 events in 20 s to a
 * receiver that answers 503 to everything, and beside them one message a second to one that
 * answers 503 to a message's first attempt and 200 to its second.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, uniqueNamespace } from '@tributary/test/harness';
import { Receiver, RetryPipeline } from './retry-pipeline.js';

describe('a flaky destination’s retries beside a flood to a failing one', () => {
  const pipeline = new RetryPipeline(uniqueNamespace('e2e-flood'), { RETRY_LADDER: '2s,10s', RETRY_WINDOW: '2m' });
  const dead = new Receiver(() => 503);
  const flaky = new Receiver((_, attempt) => (attempt === 1 ? 503 : 200));

  beforeAll(async () => {
    await dead.start();
    await flaky.start();
    await pipeline.start();
  });

  afterAll(async () => {
    await pipeline.stop();
    await dead.stop();
    await flaky.stop();
  });

  it('retries the flaky one on time while the flood climbs the ladder', { timeout: 180_000 }, async () => {
    const flakyKey = await pipeline.connect('flaky', flaky.url);
    const floodKey = `wk_flood_${pipeline.namespace}`;
    await pipeline.admin('PUT', '/sources/flood', { name: 'Flood', writeKey: floodKey });
    await pipeline.admin('PUT', '/destinations/dead', { type: 'webhooks', sources: ['flood'], settings: { webhooks: [{ url: dead.url }] } });
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    const flood = pipeline.trackEverySecond(floodKey, 1_000, 20);
    const messageIds: string[] = [];
    for (let second = 0; second < 20; second++) {
      messageIds.push(...(await pipeline.track(flakyKey, 1)));
      await new Promise((resolve) => setTimeout(resolve, 1_000));
    }
    await flood;
    await eventually(() => messageIds.every((id) => flaky.attemptsFor(id).length >= 2), 'every flaky message retried', 120_000);
    const delays = messageIds.map((id) => flaky.attemptsFor(id)[1]!.at - flaky.attemptsFor(id)[0]!.at).sort((a, b) => a - b);
    console.log(`flaky destination's retry delay beside the flood (tier 2 s): p50 ${delays[Math.floor(delays.length / 2)]} ms, max ${delays.at(-1)} ms; requests to the dead one: ${dead.attempts.length}`);
    // On time: the tier's own delay and little more (runs: 2.01-2.24 s), not behind the flood's
    // thousands of records on the same tier. The bound leaves a slow machine room and stays
    // under the ladder's next step (10 s).
    expect(delays[0]).toBeGreaterThanOrEqual(2_000);
    expect(delays.at(-1)).toBeLessThan(8_000);
    // The flood costs the dead receiver a circuit's worth of requests, not one per delivery.
    expect(dead.attempts.length).toBeLessThan(1_000);
  });
});
