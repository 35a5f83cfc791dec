/**
 * The indexer's Prometheus series. Counters move only once a batch's rows and offsets are
 * committed, so a batch indexed again after a failure is not counted twice.
 */
import { Counter, Histogram, type Registry } from 'prom-client';
import { createConsumerLagGauge, createQuarantineCounter, LATENCY_BUCKETS, type ConsumerLagProbe } from '@tributary/shared';
import type { SqlFailure } from './sql/client.js';
import { RETAINED_TABLES } from './store/queries.js';

export interface IndexerMetrics {
  recordsIndexed: Counter<'topic'>;
  rowsWritten: Counter<'table'>;
  batchWriteDuration: Histogram;
  databaseErrors: Counter<'kind'>;
  quarantined: Counter<'topic' | 'reason'>;
  retentionDeleted: Counter<'table'>;
}

export function createIndexerMetrics(registry: Registry, topics: readonly string[], lag: Pick<ConsumerLagProbe, 'measure'>): IndexerMetrics {
  const registers = [registry];
  const metrics: IndexerMetrics = {
    recordsIndexed: new Counter({
      name: 'tributary_indexer_records_total',
      help: 'Records read and indexed (written, or set aside on the quarantine topic), by the topic they came from.',
      labelNames: ['topic'],
      registers,
    }),
    rowsWritten: new Counter({
      name: 'tributary_indexer_rows_written_total',
      help: 'Rows inserted or updated in the delivery log, by table (a record indexed again writes none).',
      labelNames: ['table'],
      registers,
    }),
    batchWriteDuration: new Histogram({
      name: 'tributary_indexer_batch_write_duration_seconds',
      help: "Time to write one batch's rows in one database transaction.",
      buckets: LATENCY_BUCKETS,
      registers,
    }),
    databaseErrors: new Counter({
      name: 'tributary_indexer_database_errors_total',
      help: 'Failed database writes: transient (retried until they pass) or data (the record refused is quarantined).',
      labelNames: ['kind'],
      registers,
    }),
    quarantined: createQuarantineCounter(registry, topics),
    retentionDeleted: new Counter({
      name: 'tributary_indexer_retention_deleted_total',
      help: 'Rows deleted because they were older than DELIVERY_LOG_RETENTION, by table.',
      labelNames: ['table'],
      registers,
    }),
  };
  for (const topic of topics) metrics.recordsIndexed.inc({ topic }, 0);
  for (const table of RETAINED_TABLES) {
    metrics.rowsWritten.inc({ table }, 0);
    metrics.retentionDeleted.inc({ table }, 0);
  }
  for (const kind of ['transient', 'data'] satisfies SqlFailure[]) metrics.databaseErrors.inc({ kind }, 0);
  createConsumerLagGauge(registry, lag);
  return metrics;
}
