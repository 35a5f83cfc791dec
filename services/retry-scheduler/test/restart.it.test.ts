/**
 * A scheduler killed with SIGKILL while it holds due records (being released, chunk by
 * chunk) and records not yet due (paused partitions), then restarted with the same
 * INSTANCE_ID: every record is released exactly once (read_committed) and none before its
 * due time — including those that came due while no scheduler was running.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { metricValue, type RunningService, startService, uniqueNamespace } from '@tributary/test/harness';
import { holding, retryRecord, TierStack } from './tiers.js';

const stack = new TierStack(uniqueNamespace('retry-kill'), { delaysMs: [1_000, 3_000], windowMs: 600_000 });
// Small transactions, so the kill lands between (or inside) many of them; a short session,
// so the restarted process gets the dead one's partitions quickly.
const env = stack.env({ INSTANCE_ID: 'retry-kill', RETRY_SCHEDULER_MAX_BATCH: '50', RETRY_SCHEDULER_SESSION_TIMEOUT: '6s' });
const running: RunningService[] = [];
// Overdue at the start, released in chunks at thousands a second: enough that the kill, sent
// once the first 300 are out, lands while some are still held even when this process stalls
// for a second or so before sending it (3,000 could all be out within 0.3 s on a fast host).
const OVERDUE = 15_000;

beforeAll(async () => {
  await stack.open();
});

afterAll(async () => {
  for (const service of running) await service.stop();
  await stack.close();
});

it('loses no retry, doubles none and fires none early across a SIGKILL and a restart', { timeout: 180_000 }, async () => {
  const first = await startService('retry-scheduler', { env });
  running.push(first);

  const now = Date.now();
  const records = [
    ...Array.from({ length: OVERDUE }, (_, index) => retryRecord('1s', now - 2_000 + (index % 1_000))),
    // Due while the scheduler is down or restarting.
    ...Array.from({ length: 200 }, (_, index) => retryRecord('1s', now + 2_000 + index * 20)),
    // Due well after the restart.
    ...Array.from({ length: 100 }, (_, index) => retryRecord('3s', now + 12_000 + index * 40)),
  ];
  // Overdue records first on each partition, then the ones due later, as a tier holds them.
  records.sort((a, b) => a.dueAt - b.dueAt);
  await stack.writeRetries(records);

  await expect.poll(() => stack.deliveryOffsets(), { timeout: 30_000, interval: 20 }).toBeGreaterThanOrEqual(300);
  await first.kill();
  const atKill = await stack.deliveryOffsets();
  expect(atKill, 'the scheduler still held due records when killed').toBeLessThan(OVERDUE);

  const second = await startService('retry-scheduler', { env });
  running.push(second);
  await expect
    .poll(async () => (await metricValue(second.url, 'tributary_retry_pending_records')) === 0 && (await metricValue(second.url, 'tributary_retries_released_total')) > 0, {
      timeout: 90_000,
      interval: 500,
    })
    .toBe(true);

  // The last release counted may still have its commit markers to come: read until every record is there.
  const deliveries = await stack.deliveries(holding(records.map((record) => record.delivery.deliveryId)));
  const counts = new Map<string, number>();
  for (const { key } of deliveries) counts.set(key, (counts.get(key) ?? 0) + 1);
  const doubled = [...counts].filter(([, count]) => count > 1);
  const missing = records.map((record) => record.delivery.deliveryId).filter((key) => !counts.has(key));
  expect({ released: deliveries.length, doubled: doubled.slice(0, 5), missing: missing.slice(0, 5) }).toEqual({ released: records.length, doubled: [], missing: [] });

  const dueAt = new Map(records.map((record) => [record.delivery.deliveryId, record.dueAt]));
  const early = deliveries.filter(({ key, timestamp }) => timestamp < dueAt.get(key)!);
  expect(early.map(({ key, timestamp }) => `${key} at ${timestamp}, due ${dueAt.get(key)}`)).toEqual([]);
  console.info(`[retry-scheduler restart] killed after ${atKill} delivery offsets were written; the restarted scheduler released the rest: ${records.length} once each, none early`);
});
