/**
 * The partitions of a tier do not wait for each other: a partition whose records keep coming
 * due (a burst deferred up the ladder, all keyed to one partition here) must not hold back a
 * record due meanwhile on another partition of the same tier. Judged by order, not by a
 * clock bound: the other partition's record must be released before flood records due two
 * seconds after it. (Handled one partition at a time, with the partition releasing for as
 * long as its records came due, it was released only after the whole flood.)
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type RetryRecord } from '@tributary/schemas';
import { partitionForKey } from '@tributary/shared';
import { metricValue, startService, stackEnv, uniqueNamespace, type RunningService } from '@tributary/test/harness';
import { holding, retryRecord, TierStack } from './tiers.js';

const stack = new TierStack(uniqueNamespace('fair'), { delaysMs: [10_000], windowMs: 3_600_000 });
let scheduler: RunningService;

beforeAll(async () => {
  await stack.open();
  scheduler = await startService('retry-scheduler', { env: stack.env({ INSTANCE_ID: 'fairness-it', LOG_LEVEL: 'warn' }) });
});

afterAll(async () => {
  await scheduler?.stop();
  await stack.close();
});

/** The partition the producer puts a key on (the services' partitioner: the Java client's murmur2). */
function partitionOf(key: string): number {
  return partitionForKey(key, Number(stackEnv().KAFKA_TOPIC_PARTITIONS));
}

const keyOf = (record: RetryRecord) => record.delivery.deliveryId;

/** Records due at `dueAt(index)` whose keys land on `partition`. */
function recordsOn(partition: number, count: number, dueAt: (index: number) => number): RetryRecord[] {
  const records: RetryRecord[] = [];
  while (records.length < count) {
    const record = retryRecord('10s', dueAt(records.length), { destinationId: 'flooded' });
    if (partitionOf(keyOf(record)) === partition) records.push(record);
  }
  return records;
}

it('releases a record due on one partition while another keeps coming due', { timeout: 120_000 }, async () => {
  const start = Date.now() + 3_000;
  const floodMs = 4_000;
  const flood = recordsOn(0, 2_000, (index) => start + Math.floor((index * floodMs) / 2_000));
  const [alone] = recordsOn(1, 1, () => start + 1_000);
  await stack.writeRetries([...flood, alone!]);
  await expect.poll(() => metricValue(scheduler.url, 'tributary_retries_released_total', { tier: '10s' }), { timeout: 60_000, interval: 250 }).toBe(flood.length + 1);

  // The counter moves once a release has committed; its markers may be written a moment later.
  const released = new Map((await stack.deliveries(holding([...flood, alone!].map(keyOf)))).map(({ key, timestamp }) => [key, timestamp]));
  const aloneAt = released.get(keyOf(alone!))!;
  const floodDueLater = flood.filter((record) => record.dueAt >= alone!.dueAt + 2_000);
  const releasedBefore = floodDueLater.filter((record) => released.get(keyOf(record))! < aloneAt).length;
  expect(aloneAt).toBeGreaterThanOrEqual(alone!.dueAt);
  expect(releasedBefore, `flood records due ≥ 2 s after the other partition's record but released before it (of ${floodDueLater.length})`).toBe(0);
});
