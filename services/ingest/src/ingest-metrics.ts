/** The ingest service's Prometheus series, on the service's registry. */
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import { LATENCY_BUCKETS, writeKindOf, type Logger, type TransactionReport } from '@tributary/shared';

export interface IngestMetrics {
  requests: Counter<'route' | 'status'>;
  messages: Counter<'type'>;
  overflowMessages: Counter;
  batchSize: Histogram;
  produceDuration: Histogram<'kind'>;
  transactionSize: Histogram<'kind'>;
}

/** `waiting`: the requests waiting for their source's turn (fair-turns.ts), read at each scrape. */
export function createIngestMetrics(registry: Registry, waiting: () => number = () => 0): IngestMetrics {
  const registers = [registry];
  new Gauge({
    name: 'tributary_ingest_requests_waiting',
    help: "Requests whose parsing and encoding wait for their source's turn: other sources' requests are being worked on.",
    registers,
    collect() {
      this.set(waiting());
    },
  });
  return {
    requests: new Counter({
      name: 'tributary_ingest_requests_total',
      help: 'Segment API requests by route and response status.',
      labelNames: ['route', 'status'],
      registers,
    }),
    messages: new Counter({
      name: 'tributary_ingest_messages_total',
      help: 'Messages accepted (committed to the ingest topic) by type.',
      labelNames: ['type'],
      registers,
    }),
    overflowMessages: new Counter({
      name: 'tributary_ingest_overflow_messages_total',
      help: 'Messages accepted into the overflow lane: sent by a source past its INGEST_SOURCE_RATE.',
      registers,
    }),
    batchSize: new Histogram({
      name: 'tributary_ingest_batch_size',
      help: 'Messages per accepted request.',
      buckets: [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000],
      registers,
    }),
    produceDuration: new Histogram({
      name: 'tributary_ingest_produce_duration_seconds',
      help: 'Duration of one write to Kafka, successful or not: kind="transaction" (begin, produce, commit) or kind="single" (one record, one idempotent produce).',
      labelNames: ['kind'],
      buckets: LATENCY_BUCKETS,
      registers,
    }),
    transactionSize: new Histogram({
      name: 'tributary_ingest_transaction_size',
      help: 'Records per write to Kafka, by kind (a single write is always 1).',
      labelNames: ['kind'],
      buckets: [1, 10, 50, 100, 200, 500, 1000, 2000, 5000, 10000],
      registers,
    }),
  };
}

/** Records one finished write (a transaction or a single record): its latency and size, and why it failed if it did. */
export function transactionObserver(metrics: IngestMetrics, logger: Logger): (report: TransactionReport) => void {
  const durations = { single: metrics.produceDuration.labels('single'), transaction: metrics.produceDuration.labels('transaction') };
  const sizes = { single: metrics.transactionSize.labels('single'), transaction: metrics.transactionSize.labels('transaction') };
  return ({ records, bytes, requests, durationMs, error }) => {
    const kind = writeKindOf(records);
    durations[kind].observe(durationMs / 1000);
    sizes[kind].observe(records);
    if (error !== undefined) logger.warn({ err: error, records, bytes, requests, durationMs, kind }, 'ingest write to Kafka failed');
  };
}
