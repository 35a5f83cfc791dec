/**
 * The router's Prometheus series. Counters move only after the transaction that made
 * the deliveries committed, so a chunk routed again after an abort is not counted twice.
 */
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import { createQuarantineCounter, FILTER_REASONS, LATENCY_BUCKETS } from '@tributary/shared';
import { INVALID_REASONS } from './message.js';
import type { ChunkOutcome } from './route-chunk.js';

export interface RouterMetrics {
  routed: Counter<'destination'>;
  parked: Counter<'destination' | 'reason'>;
  deferred: Counter<'destination'>;
  diverted: Counter<'source'>;
  filtered: Counter<'reason'>;
  duplicates: Counter;
  invalid: Counter<'reason'>;
  quarantined: Counter<'topic' | 'reason'>;
  batchDuration: Histogram;
  transactionDuration: Histogram;
  transactionSize: Histogram;
  transactionBytes: Histogram;
  transactionPartitions: Histogram;
  transactionFailures: Counter;
  dedupCapacityEvictions: Counter;
  recordCommitted(outcome: ChunkOutcome): void;
}

/** `consumedTopics`: the ingest topics the router reads, whose quarantine series start at 0. */
export function createRouterMetrics(registry: Registry, dedupEntries: () => number, consumedTopics: readonly string[]): RouterMetrics {
  const registers = [registry];
  const filtered = new Counter({
    name: 'tributary_router_filtered_total',
    help: 'Messages (per destination for destination_disabled and integrations_off, else per message) not routed, by reason.',
    labelNames: ['reason'],
    registers,
  });
  for (const reason of FILTER_REASONS) filtered.inc({ reason }, 0);
  const invalid = new Counter({
    name: 'tributary_router_invalid_total',
    help: 'Ingest records quarantined because they could not be decoded, lacked required fields or passed a limit.',
    labelNames: ['reason'],
    registers,
  });
  for (const reason of INVALID_REASONS) invalid.inc({ reason }, 0);
  new Gauge({
    name: 'tributary_router_dedup_entries',
    help: 'Message ids held in memory for deduplication.',
    registers,
    collect() {
      this.set(dedupEntries());
    },
  });
  const metrics: RouterMetrics = {
    routed: new Counter({
      name: 'tributary_router_routed_total',
      help: 'Delivery records produced, by destination.',
      labelNames: ['destination'],
      registers,
    }),
    parked: new Counter({
      name: 'tributary_router_parked_total',
      help: 'Delivery records written to the retry lane instead of the first-attempt topic, by reason: circuit_open (open or half-open at every dispatcher), congested (that, or attempts stalled, or every request slot taken with deliveries waiting), or overflow (read from the overflow lane: its source is past its INGEST_SOURCE_RATE share).',
      labelNames: ['destination', 'reason'],
      registers,
    }),
    deferred: new Counter({
      name: 'tributary_router_deferred_total',
      help: 'New deliveries written straight onto a retry tier instead of to a dispatcher: the destination\'s circuit was open at every dispatcher for at least another second. No request, no attempt counted; the retry window starts.',
      labelNames: ['destination'],
      registers,
    }),
    diverted: new Counter({
      name: 'tributary_router_diverted_total',
      help: 'Main ingest topic records moved to the overflow lane unrouted, by source: past its ROUTER_SOURCE_RATE share, by the records\' timestamps (a producer writing to the topic directly).',
      labelNames: ['source'],
      registers,
    }),
    filtered,
    duplicates: new Counter({
      name: 'tributary_router_duplicates_total',
      help: 'Messages dropped because their messageId was already forwarded for the source within the dedup window.',
      registers,
    }),
    invalid,
    quarantined: createQuarantineCounter(registry, consumedTopics),
    batchDuration: new Histogram({
      name: 'tributary_router_batch_duration_seconds',
      help: 'Time to route one chunk of ingest records, from decoding to the committed transaction.',
      buckets: LATENCY_BUCKETS,
      registers,
    }),
    transactionDuration: new Histogram({
      name: 'tributary_router_transaction_duration_seconds',
      help: 'Time from beginning a Kafka transaction to its commit.',
      buckets: LATENCY_BUCKETS,
      registers,
    }),
    transactionSize: new Histogram({
      name: 'tributary_router_transaction_size',
      help: 'Ingest records routed per committed Kafka transaction.',
      buckets: [1, 10, 50, 100, 200, 500, 1000, 2000, 5000, 10000],
      registers,
    }),
    transactionBytes: new Histogram({
      name: 'tributary_router_transaction_bytes',
      help: 'Bytes of record values one committed routing transaction wrote (deliveries, deferrals, dedup entries, quarantined records); bounded near ROUTER_MAX_BATCH_BYTES.',
      buckets: [16_384, 65_536, 262_144, 1_048_576, 2_097_152, 4_194_304, 8_388_608, 16_777_216, 67_108_864],
      registers,
    }),
    transactionPartitions: new Histogram({
      name: 'tributary_router_transaction_partitions',
      help: 'Ingest partitions whose chunks one committed Kafka transaction carried.',
      buckets: [1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 64],
      registers,
    }),
    transactionFailures: new Counter({
      name: 'tributary_router_transaction_failures_total',
      help: 'Transactions that failed and were aborted (their chunks are routed again).',
      registers,
    }),
    dedupCapacityEvictions: new Counter({
      name: 'tributary_router_dedup_capacity_evictions_total',
      help: 'Message ids forgotten before the end of the dedup window because DEDUP_MAX_ENTRIES was reached.',
      registers,
    }),
    recordCommitted(outcome) {
      for (const [destination, count] of outcome.routed) metrics.routed.inc({ destination }, count);
      for (const [reason, count] of outcome.filtered) metrics.filtered.inc({ reason }, count);
      if (outcome.duplicates > 0) metrics.duplicates.inc(outcome.duplicates);
      for (const { error } of outcome.invalid) metrics.invalid.inc({ reason: error.reason });
    },
  };
  return metrics;
}
