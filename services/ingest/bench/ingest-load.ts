/**
 * Load on a running ingest service: autocannon POSTs batches of 100 messages (shaped as
 * analytics-go v2 sends them) to /v1/batch for a fixed time and prints accepted events
 * per second, request latency percentiles, and — from the service's /metrics, read
 * before and after — how many Kafka transactions (and single-record writes) carried them and
 * how long those took.
 *
 * It starts nothing: point it at an ingest that is up and has a source for WRITE_KEY
 * (`npm start` serves wk_local_demo on 127.0.0.1:8080).
 *
 *   WRITE_KEY=wk_local_demo npm run bench:load -w services/ingest
 *
 * Settings: INGEST_URL (http://127.0.0.1:8080), WRITE_KEY (wk_local_demo),
 * BENCH_SECONDS (20), BENCH_CONNECTIONS (16), BENCH_BATCH_SIZE (100).
 */
import { randomUUID } from 'node:crypto';
import autocannon from 'autocannon';

const url = (process.env.INGEST_URL ?? 'http://127.0.0.1:8080').replace(/\/$/, '');
const writeKey = process.env.WRITE_KEY ?? 'wk_local_demo';
const seconds = Number(process.env.BENCH_SECONDS ?? 20);
const connections = Number(process.env.BENCH_CONNECTIONS ?? 16);
const batchSize = Number(process.env.BENCH_BATCH_SIZE ?? 100);

/** Users the bodies are spread over, so records differ in keys. */
const BODY_VARIANTS = 64;

function goTimestamp(ms: number): string {
  // analytics-go v2's strftime %Y-%m-%dT%H:%M:%S%z, in UTC.
  return `${new Date(ms).toISOString().slice(0, 19)}+0000`;
}

function batchBody(variant: number): string {
  const now = Date.now();
  const batch = Array.from({ length: batchSize }, (_, index) => {
    const user = `bench-user-${variant}-${index % 25}`;
    return {
      type: 'track',
      messageId: randomUUID(),
      timestamp: goTimestamp(now - index),
      userId: user,
      event: 'Order Completed',
      properties: { orderId: `o-${variant}-${index}`, revenue: 42.5 + index, currency: 'EUR', products: [{ sku: 'sku-1', quantity: 2 }] },
      context: { ip: '203.0.113.10', page: { path: '/checkout', url: 'https://shop.example/checkout' } },
      integrations: { All: true },
    };
  });
  return JSON.stringify({ batch, context: { library: { name: 'analytics-go', version: '2.1.1' } }, messageId: randomUUID(), sentAt: goTimestamp(now) });
}

interface TransactionStats {
  count: number;
  seconds: number;
  records: number;
  buckets: Map<number, number>;
}

type WriteKind = 'transaction' | 'single';
const KINDS: readonly WriteKind[] = ['transaction', 'single'];

/**
 * The ingest write histograms from /metrics (cumulative since the service started), by kind:
 * transactions, and single records written without one. (An ingest from before the `kind`
 * label counts every write as a transaction.)
 */
async function writeStats(): Promise<Record<WriteKind, TransactionStats>> {
  const text = await (await fetch(`${url}/metrics`)).text();
  const stats = Object.fromEntries(KINDS.map((kind) => [kind, { count: 0, seconds: 0, records: 0, buckets: new Map<number, number>() }])) as Record<WriteKind, TransactionStats>;
  const kindOf = (labels: string): WriteKind => (/kind="single"/.test(labels) ? 'single' : 'transaction');
  for (const match of text.matchAll(/^(tributary_ingest_produce_duration_seconds_(?:bucket|count|sum)|tributary_ingest_transaction_size_sum)\{([^}]*)\} (\S+)$/gm)) {
    const [, name, labels = '', raw] = match;
    const entry = stats[kindOf(labels)];
    const value = Number(raw);
    if (name === 'tributary_ingest_produce_duration_seconds_bucket') {
      const bound = /le="([^"]+)"/.exec(labels)?.[1];
      if (bound !== undefined) entry.buckets.set(bound === '+Inf' ? Infinity : Number(bound), value);
    } else if (name === 'tributary_ingest_produce_duration_seconds_count') entry.count = value;
    else if (name === 'tributary_ingest_produce_duration_seconds_sum') entry.seconds = value;
    else entry.records = value;
  }
  return stats;
}

/** Upper bound of the histogram bucket holding quantile q of the transactions in (before, after]. */
function bucketQuantile(before: TransactionStats, after: TransactionStats, q: number): number {
  const total = after.count - before.count;
  for (const [bound, cumulative] of [...after.buckets].sort(([a], [b]) => a - b)) {
    if (cumulative - (before.buckets.get(bound) ?? 0) >= q * total) return bound;
  }
  return Infinity;
}

async function main(): Promise<void> {
  // A fresh body per request: messages that repeated ids would be dropped by the router as
  // duplicates, and the pipeline behind ingest would do nothing with them.
  let next = 0;
  const before = await writeStats();
  const result = await autocannon({
    url: `${url}/v1/batch`,
    method: 'POST',
    connections,
    duration: seconds,
    headers: {
      'content-type': 'application/json',
      authorization: `Basic ${Buffer.from(`${writeKey}:`).toString('base64')}`,
    },
    requests: [
      {
        setupRequest: (request) => {
          request.body = batchBody(next++ % BODY_VARIANTS);
          return request;
        },
      },
    ],
  });
  const after = await writeStats();

  const accepted = result['2xx'];
  const summary = (kind: WriteKind) => {
    const count = after[kind].count - before[kind].count;
    return {
      count,
      meanMs: count > 0 ? Number((((after[kind].seconds - before[kind].seconds) / count) * 1000).toFixed(2)) : null,
      p50UpToMs: count > 0 ? bucketQuantile(before[kind], after[kind], 0.5) * 1000 : null,
      p99UpToMs: count > 0 ? bucketQuantile(before[kind], after[kind], 0.99) * 1000 : null,
      meanRecords: count > 0 ? Math.round((after[kind].records - before[kind].records) / count) : null,
    };
  };
  const report = {
    target: `${url}/v1/batch`,
    seconds: result.duration,
    connections,
    batchSize,
    requests: { accepted, refused: result.non2xx, errors: result.errors, timeouts: result.timeouts },
    eventsPerSecond: Math.round((accepted * batchSize) / result.duration),
    requestLatencyMs: { p50: result.latency.p50, p90: result.latency.p90, p99: result.latency.p99, max: result.latency.max },
    transactions: summary('transaction'),
    singleRecordWrites: summary('single'),
  };
  process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
  if (accepted === 0 || result.non2xx > 0) {
    process.stderr.write('some requests were not accepted: check WRITE_KEY and the service log\n');
    process.exitCode = 1;
  }
}

await main();
