/**
 * The metrics the services expose, as the dashboards and alert rules in deploy/ expect them.
 * This is the one list both are checked against, and test/e2e/metrics-contract.it.test.ts
 * compares it with what the running services serve at /metrics (types, and the labels of every
 * sample), so a renamed metric breaks a test instead of silently emptying a panel or disarming
 * an alert.
 */

export type MetricType = 'counter' | 'gauge' | 'histogram';
export type ServiceName = 'ingest' | 'router' | 'dispatcher' | 'retry-scheduler' | 'indexer';

export interface MetricDefinition {
  name: string;
  type: MetricType;
  /** Labels beyond `service`, which every series carries (prom-client default label). */
  labels: readonly string[];
  /** Services expected to expose it. */
  services: readonly ServiceName[];
}

export const SERVICES: readonly ServiceName[] = ['ingest', 'router', 'dispatcher', 'retry-scheduler', 'indexer'];

const metric = (name: string, type: MetricType, labels: readonly string[], services: readonly ServiceName[]): MetricDefinition => ({
  name,
  type,
  labels,
  services,
});

export const TRIBUTARY_METRICS: readonly MetricDefinition[] = [
  metric('tributary_ingest_requests_total', 'counter', ['route', 'status'], ['ingest']),
  metric('tributary_ingest_messages_total', 'counter', ['type'], ['ingest']),
  metric('tributary_ingest_batch_size', 'histogram', [], ['ingest']),
  metric('tributary_ingest_overflow_messages_total', 'counter', [], ['ingest']),
  metric('tributary_ingest_produce_duration_seconds', 'histogram', ['kind'], ['ingest']),
  metric('tributary_ingest_transaction_size', 'histogram', ['kind'], ['ingest']),
  metric('tributary_ingest_requests_waiting', 'gauge', [], ['ingest']),

  metric('tributary_router_routed_total', 'counter', ['destination'], ['router']),
  metric('tributary_router_parked_total', 'counter', ['destination', 'reason'], ['router']),
  metric('tributary_router_deferred_total', 'counter', ['destination'], ['router']),
  metric('tributary_router_diverted_total', 'counter', ['source'], ['router']),
  metric('tributary_router_filtered_total', 'counter', ['reason'], ['router']),
  metric('tributary_router_duplicates_total', 'counter', [], ['router']),
  metric('tributary_router_invalid_total', 'counter', ['reason'], ['router']),
  metric('tributary_router_batch_duration_seconds', 'histogram', [], ['router']),
  metric('tributary_router_transaction_duration_seconds', 'histogram', [], ['router']),

  metric('tributary_delivery_latency_seconds', 'histogram', [], ['dispatcher']),
  metric('tributary_webhook_request_duration_seconds', 'histogram', ['outcome'], ['dispatcher']),
  metric('tributary_delivery_attempts_total', 'counter', ['outcome', 'status_class'], ['dispatcher']),
  metric('tributary_dispatcher_in_flight', 'gauge', [], ['dispatcher']),
  metric('tributary_dispatcher_deferred_total', 'counter', ['reason'], ['dispatcher']),
  metric('tributary_dispatcher_host_lookups_total', 'counter', ['answer'], ['dispatcher']),
  metric('tributary_destination_circuit_state', 'gauge', ['destination'], ['dispatcher']),
  metric('tributary_destination_deliveries_total', 'counter', ['destination', 'result'], ['dispatcher']),
  metric('tributary_destination_backlog', 'gauge', ['destination', 'lane'], ['dispatcher']),
  metric('tributary_destination_in_flight', 'gauge', ['destination'], ['dispatcher']),
  metric('tributary_retries_scheduled_total', 'counter', ['tier'], ['dispatcher']),
  // Both write dead letters: the dispatcher for permanent failures, the scheduler for expiry.
  metric('tributary_dead_letters_total', 'counter', ['reason'], ['dispatcher', 'retry-scheduler']),

  metric('tributary_retries_released_total', 'counter', ['tier'], ['retry-scheduler']),
  metric('tributary_retries_deferred_total', 'counter', ['tier'], ['retry-scheduler']),
  metric('tributary_retries_expired_total', 'counter', ['tier'], ['retry-scheduler']),
  metric('tributary_retry_due_lag_seconds', 'histogram', ['tier'], ['retry-scheduler']),
  metric('tributary_retry_oldest_record_age_seconds', 'gauge', ['tier'], ['retry-scheduler']),
  // The tier groups' lag, read from the broker: right even when a tier's consumer is stuck.
  metric('tributary_retry_pending_records', 'gauge', ['tier'], ['retry-scheduler']),

  // The delivery log (its consumer group is `<ns>-indexer`).
  metric('tributary_indexer_records_total', 'counter', ['topic'], ['indexer']),
  metric('tributary_indexer_rows_written_total', 'counter', ['table'], ['indexer']),
  metric('tributary_indexer_batch_write_duration_seconds', 'histogram', [], ['indexer']),
  metric('tributary_indexer_database_errors_total', 'counter', ['kind'], ['indexer']),
  metric('tributary_indexer_retention_deleted_total', 'counter', ['table'], ['indexer']),

  // Every consuming service sets aside the records it can never handle.
  metric('tributary_quarantined_total', 'counter', ['topic', 'reason'], ['router', 'dispatcher', 'retry-scheduler', 'indexer']),

  // Every service counts the requests it sends to Kafka, by protocol API (shared/src/kafka-requests.ts).
  metric('tributary_kafka_requests_total', 'counter', ['api'], SERVICES),

  // Every service that consumes reports the lag of its groups, measured at the broker
  // (shared/src/consumer-lag.ts).
  metric('tributary_consumer_lag', 'gauge', ['group', 'topic', 'partition'], ['router', 'dispatcher', 'retry-scheduler', 'indexer']),
];

/** prom-client's default metrics (`collectDefaultMetrics`) that deploy/ uses; every service has them. */
export const DEFAULT_METRICS: readonly MetricDefinition[] = [
  metric('process_cpu_seconds_total', 'counter', [], SERVICES),
  metric('process_resident_memory_bytes', 'gauge', [], SERVICES),
  metric('nodejs_eventloop_lag_p99_seconds', 'gauge', [], SERVICES),
];

/** Series Prometheus itself writes for every scrape target. */
export const SCRAPE_METRICS: readonly string[] = ['up'];

/**
 * Labels a query may use on any series: `service` from the services themselves, the rest
 * added by the Kubernetes scrape configuration (ServiceMonitor or pod annotations). Both copy
 * the pods' part-of and component labels: the chart's ServiceMonitor with podTargetLabels, an
 * annotation-based scrape config with its labelmap of every pod label.
 */
export const TARGET_LABELS: readonly string[] = [
  'service',
  'namespace',
  'pod',
  'job',
  'instance',
  'container',
  'endpoint',
  'app_kubernetes_io_part_of',
  'app_kubernetes_io_component',
];

export const ALL_METRICS: readonly MetricDefinition[] = [...TRIBUTARY_METRICS, ...DEFAULT_METRICS];
