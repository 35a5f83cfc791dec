/**
 * Due-lag figure: how late the scheduler releases retries when 1,000 are pending. Writes
 * RETRIES records (default 1000) to the first tier, due evenly over SPREAD (default 5 s)
 * starting a few seconds after they are written, waits until all are released, and reads
 * `tributary_retry_due_lag_seconds` from /metrics: p50 and p99 interpolated inside the
 * buckets as Prometheus's histogram_quantile does. The exact lags from the released
 * records' Kafka timestamps (send time of the release, a little before its commit) are
 * printed beside them.
 *
 *   npx tsc -b services/retry-scheduler && cd services/retry-scheduler && npm run bench
 *   DUE_LAG_RETRIES=5000 DUE_LAG_SPREAD=10s npm run bench
 */
import { expect, it } from 'vitest';
import { parseDuration } from '@tributary/shared';
import { metricValue, startService, uniqueNamespace } from '@tributary/test/harness';
import { retryRecord, TierStack } from '../test/tiers.js';

const RETRIES = Number(process.env.DUE_LAG_RETRIES ?? 1000);
const SPREAD_MS = parseDuration(process.env.DUE_LAG_SPREAD ?? '5s');
const LEAD_MS = 3_000;

/** Cumulative bucket counts of one histogram series, by upper bound. */
async function buckets(url: string, name: string, tier: string): Promise<Array<{ le: number; count: number }>> {
  const text = await (await fetch(`${url}/metrics`)).text();
  const result: Array<{ le: number; count: number }> = [];
  for (const line of text.split('\n')) {
    const match = new RegExp(`^${name}_bucket\\{(.*)\\} (\\S+)$`).exec(line);
    if (!match || !match[1]!.includes(`tier="${tier}"`)) continue;
    const le = /le="([^"]+)"/.exec(match[1]!)![1]!;
    result.push({ le: le === '+Inf' ? Infinity : Number(le), count: Number(match[2]) });
  }
  return result.sort((a, b) => a.le - b.le);
}

/** histogram_quantile: linear interpolation inside the bucket holding the quantile. */
function histogramQuantile(q: number, cumulative: Array<{ le: number; count: number }>): number {
  const total = cumulative[cumulative.length - 1]?.count ?? 0;
  const rank = q * total;
  let lower = 0;
  let below = 0;
  for (const { le, count } of cumulative) {
    if (count >= rank) {
      if (le === Infinity) return lower;
      return lower + ((le - lower) * (rank - below)) / Math.max(1, count - below);
    }
    lower = le;
    below = count;
  }
  return lower;
}

/** The scheduler's transactions (EndTxn requests), Kafka requests and CPU so far. */
async function cost(url: string): Promise<{ transactions: number; requests: number; cpuSeconds: number }> {
  const [transactions, requests, cpuSeconds] = await Promise.all([
    metricValue(url, 'tributary_kafka_requests_total', { api: 'EndTxn' }),
    metricValue(url, 'tributary_kafka_requests_total'),
    metricValue(url, 'process_cpu_seconds_total'),
  ]);
  return { transactions, requests, cpuSeconds };
}

function exactQuantile(q: number, sorted: number[]): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)]!;
}

it(`releases ${RETRIES} pending retries close to their due times`, async () => {
  const stack = new TierStack(uniqueNamespace('due-lag'), { delaysMs: [10_000], windowMs: 3_600_000 });
  await stack.open();
  const scheduler = await startService('retry-scheduler', { env: stack.env({ INSTANCE_ID: 'due-lag-bench', LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? 'info' }) });
  try {
    const costBefore = await cost(scheduler.url);
    const start = Date.now() + LEAD_MS;
    const records = Array.from({ length: RETRIES }, (_, index) => retryRecord('10s', start + Math.floor((index * SPREAD_MS) / RETRIES), { firstAttemptAt: start - 10_000 }));
    await stack.writeRetries(records);
    const pendingAtStart = await metricValue(scheduler.url, 'tributary_retry_pending_records', { tier: '10s' });
    await expect.poll(() => metricValue(scheduler.url, 'tributary_retries_released_total', { tier: '10s' }), { timeout: LEAD_MS + SPREAD_MS + 60_000, interval: 250 }).toBe(RETRIES);

    const costAfter = await cost(scheduler.url);
    const histogram = await buckets(scheduler.url, 'tributary_retry_due_lag_seconds', '10s');
    const dueAt = new Map(records.map((record) => [record.delivery.deliveryId, record.dueAt]));
    const exact = (await stack.deliveries()).map(({ key, timestamp }) => timestamp - dueAt.get(key)!).sort((a, b) => a - b);
    expect(exact.length).toBe(RETRIES);
    expect(exact[0]).toBeGreaterThanOrEqual(0);

    const ms = (seconds: number) => `${(seconds * 1000).toFixed(1)} ms`;
    console.info(
      [
        `[due-lag] ${RETRIES} retries due over ${SPREAD_MS / 1000} s on one tier (2 partitions); ${pendingAtStart} pending when measured before the first was due`,
        `[due-lag] histogram (tributary_retry_due_lag_seconds, release commit − dueAt): p50 ${ms(histogramQuantile(0.5, histogram))}, p99 ${ms(histogramQuantile(0.99, histogram))}`,
        `[due-lag] exact (record timestamp − dueAt): p50 ${exactQuantile(0.5, exact)} ms, p99 ${exactQuantile(0.99, exact)} ms, max ${exact[exact.length - 1]} ms`,
        `[due-lag] cost: ${costAfter.transactions - costBefore.transactions} transactions, ${costAfter.requests - costBefore.requests} Kafka requests, ` +
          `${(((costAfter.cpuSeconds - costBefore.cpuSeconds) * 1e6) / RETRIES).toFixed(0)} µs of the scheduler's CPU per release (the whole process, idle included)`,
      ].join('\n'),
    );
  } finally {
    await scheduler.stop();
    await stack.close();
  }
});
