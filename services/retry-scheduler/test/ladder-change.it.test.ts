/**
 * RETRY_LADDER changed under waiting retries: records on a tier the new ladder no longer has
 * are still released when due (and expired past the window) — the scheduler serves every tier
 * topic of its namespace, not only its ladder's, including one that appears while it runs.
 * Real broker and registry, the scheduler as a process.
 */
import { readFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { metricValue, type RunningService, startService, uniqueNamespace } from '@tributary/test/harness';
import { holding, retryRecord, TierStack } from './tiers.js';

const namespace = uniqueNamespace('retry-ladder');
// What the dispatchers wrote with: a 7 s tier the new ladder has dropped.
const before = new TierStack(namespace, { delaysMs: [1_000, 4_000, 7_000], windowMs: 60_000 });
const after = new TierStack(namespace, { delaysMs: [1_000, 4_000], windowMs: 60_000 });
let scheduler: RunningService | undefined;

beforeAll(async () => {
  await before.open();
});

afterAll(async () => {
  await scheduler?.stop();
  await before.close();
});

describe('a tier taken out of RETRY_LADDER', () => {
  it('still has its waiting records released when due, and expired past the window', async () => {
    const now = Date.now();
    const waiting = Array.from({ length: 5 }, (_, index) => retryRecord('7s', now + 2_000 + index * 100));
    const expired = retryRecord('7s', now - 1_000, { firstAttemptAt: now - 61_000 });
    await before.writeRetries([...waiting, expired]);

    scheduler = await startService('retry-scheduler', { env: after.env({ INSTANCE_ID: 'retry-ladder-it' }) });
    await expect.poll(() => metricValue(scheduler!.url, 'tributary_retries_released_total', { tier: '7s' }), { timeout: 30_000, interval: 200 }).toBe(waiting.length);

    // The counter moves once a release has committed; its markers may be written a moment later.
    const released = await after.deliveries(holding(waiting.map((record) => record.delivery.deliveryId)));
    expect(released.map(({ key }) => key).sort()).toEqual(waiting.map((record) => record.delivery.deliveryId).sort());
    for (const { key, timestamp } of released) {
      expect(timestamp, `${key} released before it was due`).toBeGreaterThanOrEqual(waiting.find((record) => record.delivery.deliveryId === key)!.dueAt);
    }
    const deadLetters = await after.deadLetters();
    expect(deadLetters.map(({ key, value }) => [key, value.reason])).toEqual([[expired.delivery.deliveryId, 'expired']]);
  }, 90_000);
});

describe('a tier topic that appears while the scheduler runs', () => {
  const scanNamespace = uniqueNamespace('retry-scan');
  const running = new TierStack(scanNamespace, { delaysMs: [1_000, 4_000], windowMs: 60_000 });
  // A dispatcher started later with a longer ladder creates a 9 s tier and writes to it.
  const later = new TierStack(scanNamespace, { delaysMs: [1_000, 4_000, 9_000], windowMs: 60_000 });
  let scanning: RunningService | undefined;

  afterAll(async () => {
    await scanning?.stop();
    await later.close();
    await running.close();
  });

  it('is found by the next scan and its records are released when due, or expired', async () => {
    await running.open();
    scanning = await startService('retry-scheduler', { env: running.env({ INSTANCE_ID: 'retry-scan-it', RETRY_SCHEDULER_TIER_SCAN_INTERVAL: '1s' }) });
    await later.open();
    const now = Date.now();
    const waiting = Array.from({ length: 4 }, (_, index) => retryRecord('9s', now + 3_000 + index * 100));
    const expired = retryRecord('9s', now - 1_000, { firstAttemptAt: now - 61_000 });
    await later.writeRetries([...waiting, expired]);

    await expect.poll(() => metricValue(scanning!.url, 'tributary_retries_released_total', { tier: '9s' }), { timeout: 30_000, interval: 200 }).toBe(waiting.length);
    const released = await running.deliveries(holding(waiting.map((record) => record.delivery.deliveryId)));
    expect(released.map(({ key }) => key).sort()).toEqual(waiting.map((record) => record.delivery.deliveryId).sort());
    for (const { key, timestamp } of released) {
      expect(timestamp, `${key} released before it was due`).toBeGreaterThanOrEqual(waiting.find((record) => record.delivery.deliveryId === key)!.dueAt);
    }
    expect((await running.deadLetters()).map(({ key, value }) => [key, value.reason])).toEqual([[expired.delivery.deliveryId, 'expired']]);
    expect(await readFile(scanning.logFile, 'utf8')).toMatch(/serving a retry tier topic that appeared after start-up/);
  }, 90_000);
});
