/** The dispatcher's Prometheus series, registered on the service's registry. */
import { Counter, Gauge, Histogram } from 'prom-client';
import { DELIVERY_LATENCY_BUCKETS, LATENCY_BUCKETS, type Metrics } from '@tributary/shared';

export interface DispatcherMetrics {
  /** Receipt by ingest → first 2xx, retries included. */
  deliveryLatency: Histogram<never>;
  /** One webhook request (one URL), by outcome: success, or the retryable kind / fatal reason. */
  requestDuration: Histogram<'outcome'>;
  /** Webhook requests by class (success, retryable, fatal) and status class (2xx … 5xx, none). */
  attempts: Counter<'outcome' | 'status_class'>;
  /** Deliveries settled, by result: delivered, retry, dead, deferred. */
  settled: Counter<'result'>;
  deadLetters: Counter<'reason'>;
  retriesScheduled: Counter<'tier'>;
  deferred: Counter<never>;
  /** Deliveries being attempted now. */
  inFlight: Gauge<never>;
  /** Deliveries read and not yet settled (queued, in flight or being recorded). */
  buffered: Gauge<never>;
  /** Records on the deliveries topic that could not be decoded and were skipped. */
  unreadable: Counter<never>;
}

export function createDispatcherMetrics({ registry }: Metrics): DispatcherMetrics {
  const registers = [registry];
  return {
    deliveryLatency: new Histogram({
      name: 'tributary_delivery_latency_seconds',
      help: 'Time from receipt by ingest to the first 2xx answer, retries included',
      buckets: DELIVERY_LATENCY_BUCKETS,
      registers,
    }),
    requestDuration: new Histogram({
      name: 'tributary_webhook_request_duration_seconds',
      help: 'Duration of one webhook request (connect to end of response body) by outcome',
      labelNames: ['outcome'],
      buckets: LATENCY_BUCKETS,
      registers,
    }),
    attempts: new Counter({
      name: 'tributary_delivery_attempts_total',
      help: 'Webhook requests by outcome class and HTTP status class',
      labelNames: ['outcome', 'status_class'],
      registers,
    }),
    settled: new Counter({
      name: 'tributary_dispatcher_deliveries_total',
      help: 'Deliveries settled by the dispatcher, by result',
      labelNames: ['result'],
      registers,
    }),
    deadLetters: new Counter({
      name: 'tributary_dead_letters_total',
      help: 'Deliveries written to the dead-letter topic, by reason',
      labelNames: ['reason'],
      registers,
    }),
    retriesScheduled: new Counter({
      name: 'tributary_retries_scheduled_total',
      help: 'Retry records written, by tier',
      labelNames: ['tier'],
      registers,
    }),
    deferred: new Counter({
      name: 'tributary_dispatcher_deferred_total',
      help: 'Deliveries deferred to the first retry tier without an attempt because their destination was saturated',
      registers,
    }),
    inFlight: new Gauge({ name: 'tributary_dispatcher_in_flight', help: 'Deliveries being attempted now', registers }),
    buffered: new Gauge({ name: 'tributary_dispatcher_buffered', help: 'Deliveries read and not yet settled', registers }),
    unreadable: new Counter({
      name: 'tributary_dispatcher_unreadable_records_total',
      help: 'Delivery records that could not be decoded and were skipped',
      registers,
    }),
  };
}
