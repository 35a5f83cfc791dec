/**
 * One prom-client registry per service, with Node's default metrics and a `service` label
 * on every series, served at /metrics by the ops server. Services create their own
 * counters and histograms with `registers: [metrics.registry]`.
 */
import { collectDefaultMetrics, Registry } from 'prom-client';
import { registerKafkaRequestsMetric } from './kafka-requests.js';

export interface Metrics {
  registry: Registry;
}

export function createMetrics(service: string): Metrics {
  const registry = new Registry();
  registry.setDefaultLabels({ service });
  collectDefaultMetrics({ register: registry });
  registerKafkaRequestsMetric(registry);
  return { registry };
}

/** Buckets in seconds for latencies that span sub-millisecond to the 5 s webhook window. */
export const LATENCY_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/** Buckets in seconds for end-to-end delivery latency, which includes retries (up to 4 h). */
export const DELIVERY_LATENCY_BUCKETS = [
  0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900, 1800, 3600, 7200, 14400,
];
