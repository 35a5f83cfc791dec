/**
 * The retry scheduler as a process (dist/main.js) against the real broker and registry:
 * retry records due in the past and in the future, on two tiers and both partitions, are
 * released to the deliveries topic exactly once and never before their due time; records
 * whose attempt would fall outside the window become `expired` dead letters; an
 * unreadable record is quarantined; a partition waiting on a long tier does not hold up a
 * short one.
 */
import { readFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { metricValue, type RunningService, startService, uniqueNamespace } from '@tributary/test/harness';
import { holding, retryRecord, TierStack } from './tiers.js';

const stack = new TierStack(uniqueNamespace('retry'), { delaysMs: [1_000, 4_000], windowMs: 60_000 });
let scheduler: RunningService;

beforeAll(async () => {
  await stack.open();
  scheduler = await startService('retry-scheduler', { env: stack.env({ INSTANCE_ID: 'retry-it' }) });
});

afterAll(async () => {
  await scheduler?.stop();
  await stack.close();
});

describe('the retry scheduler', () => {
  it('releases every record once, never before it is due, and expires what falls outside the window', async () => {
    const now = Date.now();
    const due = [
      // Overdue: released at once.
      ...Array.from({ length: 10 }, (_, index) => retryRecord('1s', now - 5_000 + index)),
      // Deferred before the first attempt: no window yet.
      retryRecord('1s', now + 300, { firstAttemptAt: null, attempts: 0 }),
      // Due over the next seconds, in due order as a tier's records are, on both tiers.
      ...Array.from({ length: 20 }, (_, index) => retryRecord('1s', now + 500 + index * 100)),
      ...Array.from({ length: 10 }, (_, index) => retryRecord('4s', now + 1_000 + index * 400)),
    ];
    const expired = [
      // Its window ended before it was due: dead at once, without waiting.
      retryRecord('4s', now + 3_000, { firstAttemptAt: now - 58_000 }),
      // Due, but the window ended while it waited (as if the scheduler had been down).
      retryRecord('1s', now - 1_000, { firstAttemptAt: now - 61_000 }),
    ];
    await stack.writeGarbage('1s', 'hooks/garbage');
    await stack.writeRetries([...due, ...expired]);

    const dueAt = new Map(due.map((record) => [record.delivery.deliveryId, record.dueAt]));
    await expect.poll(() => metricValue(scheduler.url, 'tributary_retries_released_total'), { timeout: 30_000, interval: 200 }).toBe(due.length);

    // The counter moves once a release has committed; its markers may be written a moment later.
    const deliveries = await stack.deliveries(holding([...dueAt.keys()]));
    expect(deliveries.map(({ key }) => key).sort()).toEqual([...dueAt.keys()].sort());
    for (const { key, value, timestamp } of deliveries) {
      expect(value.deliveryId).toBe(key);
      // Released unchanged: the dispatcher's attempt count and window start travel on.
      const original = due.find((record) => record.delivery.deliveryId === key)!.delivery;
      expect(value).toEqual(original);
      expect(timestamp, `${key} released before it was due`).toBeGreaterThanOrEqual(dueAt.get(key)!);
    }

    const deadLetters = await stack.deadLetters();
    expect(deadLetters.map(({ key, value }) => [key, value.reason]).sort()).toEqual(expired.map((record) => [record.delivery.deliveryId, 'expired']).sort());
    for (const { value } of deadLetters) {
      expect(value.status).toBe(503);
      expect(value.error).toMatch(/would be attempted after the 1m window from the first attempt .*; last error: HTTP 503$/);
    }
    expect(await metricValue(scheduler.url, 'tributary_dead_letters_total', { reason: 'expired' })).toBe(2);
    // Every end goes to the delivery log, whoever decides it.
    const logged = (await stack.attempts()).map(({ key, value }) => [key, value.kind, value.outcome, value.deadReason, value.lane]);
    expect(logged.sort()).toEqual(expired.map((record) => [record.delivery.deliveryId, 'preflight', 'dead', 'expired', 'retry']).sort());
    // The service's own log counts them, a line per tier and destination every 10 s, not a line each.
    const expiredLines = async () =>
      (await readFile(scheduler.logFile, 'utf8'))
        .split('\n')
        .filter((line) => line.includes('retries outside the window'))
        .map((line) => JSON.parse(line) as { level: string; tier: string; destinationId: string; count: number });
    await expect.poll(async () => (await expiredLines()).reduce((sum, line) => sum + line.count, 0), { timeout: 15_000, interval: 500 }).toBe(2);
    expect((await expiredLines()).map(({ level, tier, destinationId }) => [level, tier, destinationId]).sort()).toEqual(
      expired.map((record) => ['info', record.tier, record.delivery.destinationId]).sort(),
    );
    expect(await metricValue(scheduler.url, 'tributary_retry_unreadable_records_total', { tier: '1s' })).toBe(1);
    expect(await metricValue(scheduler.url, 'tributary_quarantined_total', { topic: stack.topics.retry('1s'), reason: 'not_framed' })).toBe(1);
    const [quarantined] = await stack.quarantined();
    expect(quarantined?.value).toMatchObject({ service: 'retry-scheduler', sourceTopic: stack.topics.retry('1s'), reason: 'not_framed', key: Buffer.from('hooks/garbage'), value: Buffer.from('not avro') });

    // Timer-driven: a record due in the future is released when its timer fires, not at
    // some later event (a rebalance, another record arriving).
    const lagCount = await metricValue(scheduler.url, 'tributary_retry_due_lag_seconds_count');
    const lagSum = await metricValue(scheduler.url, 'tributary_retry_due_lag_seconds_sum');
    expect(lagCount).toBe(due.length);
    const futureLags = deliveries.filter(({ key }) => dueAt.get(key)! > now).map(({ key, timestamp }) => timestamp - dueAt.get(key)!);
    expect(Math.max(...futureLags)).toBeLessThan(5_000);
    console.info(
      `[retry-scheduler] ${due.length} released; records due in the future were released ${Math.min(...futureLags)}–${Math.max(...futureLags)} ms ` +
        `after their due time (mean due lag over all, overdue ones included: ${((lagSum / lagCount) * 1000).toFixed(0)} ms)`,
    );
  });

  it('reports the records waiting per tier, and the age of the heads it holds', async () => {
    const now = Date.now();
    await stack.writeRetries([retryRecord('4s', now + 60_000, { firstAttemptAt: now })]);
    await expect.poll(() => metricValue(scheduler.url, 'tributary_retry_pending_records', { tier: '4s' }), { timeout: 15_000, interval: 200 }).toBe(1);
    await expect.poll(() => metricValue(scheduler.url, 'tributary_retry_oldest_record_age_seconds', { tier: '4s' }), { timeout: 15_000, interval: 200 }).toBeGreaterThan(0);
    expect(await metricValue(scheduler.url, 'tributary_retry_pending_records', { tier: '1s' })).toBe(0);
    expect(await metricValue(scheduler.url, 'tributary_consumer_lag', { group: `${stack.namespace}-retry-scheduler-4s` })).toBe(1);
  });

  it('defers again, rather than releases, a due record whose destination has its circuit open at every dispatcher', async () => {
    const now = Date.now();
    await stack.writeHealth({
      destinationId: 'down', instanceId: 'dispatcher-1', state: 'open', stateSince: now, openUntil: now + 30_000, openings: 2,
      consecutiveFailures: 8, windowRequests: 8, windowFailures: 8, lastSuccessAt: null, lastFailureAt: now, lastError: 'HTTP 503',
      queuedFirst: 0, queuedRetries: 0, inFlight: 0, congestedSince: null, attempts: 8, deferrals: 0, updatedAt: now,
    });
    const released = await metricValue(scheduler.url, 'tributary_retries_released_total');
    // Due in 3 s: the scheduler has read the view by then (its health reader is running).
    const down = retryRecord('1s', now + 3_000, { destinationId: 'down', firstAttemptAt: now });
    const healthy = retryRecord('1s', now + 3_000, { destinationId: 'hooks', firstAttemptAt: now });
    // Its window ends 4 s from now: no further wait fits, the deferral ends it.
    const ending = retryRecord('1s', now + 3_000, { destinationId: 'down', firstAttemptAt: now - 56_000 });
    await stack.writeRetries([down, healthy, ending]);

    await expect.poll(() => metricValue(scheduler.url, 'tributary_retries_deferred_total', { tier: '1s' }), { timeout: 20_000, interval: 200 }).toBe(2);
    await expect.poll(() => metricValue(scheduler.url, 'tributary_retries_released_total'), { timeout: 20_000, interval: 200 }).toBe(released + 1);
    // Read once what was counted is visible: the broker writes a commit's markers after the commit
    // has answered, and the scheduler counts it then.
    const deliveries = await stack.deliveries(holding([healthy.delivery.deliveryId]));
    expect(deliveries.some(({ key }) => key === down.delivery.deliveryId)).toBe(false);
    expect(deliveries.some(({ key }) => key === healthy.delivery.deliveryId)).toBe(true);
    // Up the ladder, to the longest tier back by the time the circuit lets probes through (4 s
    // of 1 s and 4 s), attempts and the last real error kept.
    const deferred = (await stack.retries('4s', holding([down.delivery.deliveryId]))).filter(({ key }) => key === down.delivery.deliveryId);
    expect(deferred).toHaveLength(1);
    expect(deferred[0]!.value.delivery).toMatchObject({ attempts: 1, firstAttemptAt: now, lastError: 'deferred: circuit open; last error: HTTP 503' });
    const dead = (await stack.deadLetters(holding([ending.delivery.deliveryId]))).filter(({ key }) => key === ending.delivery.deliveryId);
    expect(dead.map(({ value }) => value.reason)).toEqual(['expired']);
    expect(dead[0]!.value.error).toMatch(/could not be attempted again within the 1m retry window \(circuit open\); last error: HTTP 503/);
    const logged = (await stack.attempts(holding([ending.delivery.deliveryId]))).filter(({ key }) => key === ending.delivery.deliveryId);
    expect(logged.map(({ value }) => [value.kind, value.outcome, value.deferReason, value.deadReason])).toEqual([['deferred', 'dead', 'circuit_open', 'expired']]);
  });
  it('goes on past a record with an impossible time, one due absurdly far ahead and a dead letter too large for the broker', async () => {
    const now = Date.now();
    const releasedBefore = await metricValue(scheduler.url, 'tributary_retries_released_total');
    // Due past any date (Avro longs go to 2^53, dates to 8.64e15): its dead letter's text threw.
    const impossible = retryRecord('1s', 8.7e15, { firstAttemptAt: 0 });
    // Deferred before a first attempt, due in 2100: waited for, it held its partition until then.
    const farAhead = retryRecord('1s', Date.UTC(2100, 0, 1), { firstAttemptAt: null, attempts: 0 });
    // Expired, with a body and last error that make its dead letter larger than the broker takes
    // (its retry record, 30 KB smaller, is not): refused, it failed every tier transaction.
    const huge = retryRecord('1s', now - 1_000, { firstAttemptAt: now - 61_000 });
    huge.delivery = { ...huge.delivery, body: Buffer.alloc(1_000_000, 0x61), lastError: 'e'.repeat(30_000) };
    const behind = Array.from({ length: 10 }, (_, index) => retryRecord('1s', now - 500 + index));
    await stack.writeRetries([huge]);
    await stack.writeRetries([impossible, farAhead, ...behind]);

    await expect.poll(() => metricValue(scheduler.url, 'tributary_retries_released_total'), { timeout: 30_000, interval: 200 }).toBe(releasedBefore + behind.length + 1);
    const released = new Set((await stack.deliveries(holding([...behind, farAhead].map((record) => record.delivery.deliveryId)))).map(({ key }) => key));
    for (const record of [...behind, farAhead]) expect(released.has(record.delivery.deliveryId), record.delivery.deliveryId).toBe(true);
    const aside = [impossible, huge].map((record) => record.delivery.deliveryId);
    const quarantined = (await stack.quarantined((written) => aside.every((key) => written.some(({ value }) => value.key?.toString() === key)))).map(({ value }) => [value.key?.toString(), value.reason]);
    expect(quarantined).toContainEqual([impossible.delivery.deliveryId, 'invalid_timestamp']);
    expect(quarantined).toContainEqual([huge.delivery.deliveryId, 'too_large']);
    expect((await stack.deadLetters()).some(({ key }) => key === huge.delivery.deliveryId || key === impossible.delivery.deliveryId)).toBe(false);
    expect(await metricValue(scheduler.url, 'tributary_quarantined_total', { topic: stack.topics.retry('1s'), reason: 'too_large' })).toBe(1);
  });
});
