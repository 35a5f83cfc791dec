/** The dispatcher's Prometheus series, registered on the service's registry. */
import { Counter, Gauge, Histogram } from 'prom-client';
import { createQuarantineCounter, DELIVERY_LATENCY_BUCKETS, LATENCY_BUCKETS, TallyCounter, TallyHistogram, type Metrics, type TallyCounterChild, type TallyHistogramChild } from '@tributary/shared';
import type { CircuitState, DeadLetterReason } from '@tributary/schemas';
import type { FatalReason } from './classify.js';
import { LOOKUP_ANSWERS } from './host-lookup.js';
import type { Settlement } from './next-step.js';

export interface DispatcherMetrics {
  // The series fed once per delivery or request are tallies (shared `tally-metrics`): plain
  // numbers read at each scrape, without prom-client's label hashing on every call.
  /** Receipt by ingest → first 2xx, retries included. */
  deliveryLatency: TallyHistogram;
  /** One webhook request (one URL), by outcome: success, or the retryable kind / fatal reason. */
  requestDuration: TallyHistogram;
  /** Webhook requests by class (success, retryable, fatal) and status class (2xx … 5xx, none). */
  attempts: TallyCounter;
  /** Deliveries settled, by result: delivered, retry, dead, deferred. */
  settled: TallyCounter;
  deadLetters: TallyCounter;
  retriesScheduled: TallyCounter;
  /** Deliveries put back on the ladder without a request, by why. */
  deferred: TallyCounter;
  /** Webhook host names resolved, by how (host-lookup.ts). */
  hostLookups: Counter<'answer'>;
  /** Deliveries being attempted now. */
  inFlight: Gauge<never>;
  /** Deliveries read and not yet settled, per lane, in records and bytes. */
  buffered: Gauge<'lane'>;
  bufferedBytes: Gauge<'lane'>;
  /** Outcome records settled and waiting to be committed with their offsets. */
  stagedBytes: Gauge<never>;
  /** Records set aside with their reason (undecodable, or an outcome too large to write). */
  quarantined: Counter<'topic' | 'reason'>;
  /** One outcome transaction: records and offsets. */
  transactionDuration: Histogram<never>;
  transactionFailures: Counter<never>;
  /** Per destination: 0 closed, 1 half-open, 2 open. */
  circuitState: Gauge<'destination'>;
  circuitTransitions: Counter<'destination' | 'to'>;
  /** Per destination: deliveries queued here, by lane, and attempts running. */
  destinationBacklog: Gauge<'destination' | 'lane'>;
  destinationInFlight: Gauge<'destination'>;
  /** Per destination: deliveries settled by result (delivered, retry, dead, deferred). */
  destinationDeliveries: TallyCounter;
}

export const CIRCUIT_STATE_VALUE: Record<CircuitState, number> = { closed: 0, half_open: 1, open: 2 };

/**
 * Every reason the dispatcher dead-letters for: a URL's fatal verdict (classify.ts), the window
 * run out, or its destination disabled or deleted (next-step.ts). `too_large` is not one: an
 * outcome too large to write is quarantined instead. A record of them all, so that a fatal
 * reason added to classify.ts and not listed here fails to compile.
 */
type DispatcherDeadLetterReason = FatalReason | Extract<DeadLetterReason, 'expired' | 'destination_disabled' | 'destination_deleted'>;
const DEAD_LETTER_REASON_LIST = {
  http_status: true,
  gone: true,
  redirect: true,
  tls: true,
  blocked_address: true,
  invalid_url: true,
  undeliverable: true,
  expired: true,
  destination_disabled: true,
  destination_deleted: true,
} as const satisfies Record<DispatcherDeadLetterReason, true>;
export const DISPATCHER_DEAD_LETTER_REASONS = Object.keys(DEAD_LETTER_REASON_LIST) as DispatcherDeadLetterReason[];

/** `consumedTopics`: the delivery lanes the dispatcher reads, whose quarantine series start at 0. */
export function createDispatcherMetrics({ registry }: Metrics, consumedTopics: readonly string[]): DispatcherMetrics {
  const registers = [registry];
  const metrics: DispatcherMetrics = {
    deliveryLatency: new TallyHistogram({
      name: 'tributary_delivery_latency_seconds',
      help: 'Time from receipt by ingest to the first 2xx answer, retries included',
      buckets: DELIVERY_LATENCY_BUCKETS,
      registry,
    }),
    requestDuration: new TallyHistogram({
      name: 'tributary_webhook_request_duration_seconds',
      help: 'Duration of one webhook request (connect to end of response body) by outcome',
      labelNames: ['outcome'],
      buckets: LATENCY_BUCKETS,
      registry,
    }),
    attempts: new TallyCounter({
      name: 'tributary_delivery_attempts_total',
      help: 'Webhook requests by outcome class and HTTP status class',
      labelNames: ['outcome', 'status_class'],
      registry,
    }),
    settled: new TallyCounter({
      name: 'tributary_dispatcher_deliveries_total',
      help: 'Deliveries settled by the dispatcher, by result',
      labelNames: ['result'],
      registry,
    }),
    deadLetters: new TallyCounter({
      name: 'tributary_dead_letters_total',
      help: 'Deliveries written to the dead-letter topic, by reason',
      labelNames: ['reason'],
      registry,
    }),
    retriesScheduled: new TallyCounter({
      name: 'tributary_retries_scheduled_total',
      help: 'Retry records written, by tier',
      labelNames: ['tier'],
      registry,
    }),
    deferred: new TallyCounter({
      name: 'tributary_dispatcher_deferred_total',
      help: 'Deliveries put back on the retry ladder without a request: circuit_open or backlog_full',
      labelNames: ['reason'],
      registry,
    }),
    hostLookups: new Counter({
      name: 'tributary_dispatcher_host_lookups_total',
      help: 'Webhook host names resolved, by answer: cache, stale (an expired answer used while a new query runs), dns (a query sent), system (the getaddrinfo fallback), localhost; failed: a query that ended without an address',
      labelNames: ['answer'],
      registers,
    }),
    inFlight: new Gauge({ name: 'tributary_dispatcher_in_flight', help: 'Deliveries being attempted now', registers }),
    buffered: new Gauge({ name: 'tributary_dispatcher_buffered', help: 'Deliveries read and not yet settled, by lane', labelNames: ['lane'], registers }),
    bufferedBytes: new Gauge({ name: 'tributary_dispatcher_buffered_bytes', help: 'Bytes of deliveries read and not yet settled, by lane', labelNames: ['lane'], registers }),
    stagedBytes: new Gauge({ name: 'tributary_dispatcher_staged_bytes', help: 'Bytes of outcome records waiting to be committed with their offsets', registers }),
    quarantined: createQuarantineCounter(registry, consumedTopics),
    transactionDuration: new Histogram({
      name: 'tributary_dispatcher_transaction_duration_seconds',
      help: 'One transaction committing outcome records and consumed offsets',
      buckets: LATENCY_BUCKETS,
      registers,
    }),
    transactionFailures: new Counter({ name: 'tributary_dispatcher_transaction_failures_total', help: 'Outcome transactions that failed (retried)', registers }),
    circuitState: new Gauge({
      name: 'tributary_destination_circuit_state',
      help: 'Circuit state of a destination in this dispatcher: 0 closed, 1 half-open, 2 open',
      labelNames: ['destination'],
      registers,
    }),
    circuitTransitions: new Counter({
      name: 'tributary_destination_circuit_transitions_total',
      help: 'Circuit state changes of a destination, by the state entered',
      labelNames: ['destination', 'to'],
      registers,
    }),
    destinationBacklog: new Gauge({
      name: 'tributary_destination_backlog',
      help: 'Deliveries of a destination queued in this dispatcher, by lane (first, retry)',
      labelNames: ['destination', 'lane'],
      registers,
    }),
    destinationInFlight: new Gauge({ name: 'tributary_destination_in_flight', help: 'Attempts of a destination running now', labelNames: ['destination'], registers }),
    destinationDeliveries: new TallyCounter({
      name: 'tributary_destination_deliveries_total',
      help: 'Deliveries of a destination settled by this dispatcher, by result (delivered, retry, dead, deferred)',
      labelNames: ['destination', 'result'],
      registry,
    }),
  };
  // Every answer's series from the start, so a rate of failed lookups is defined before the first.
  for (const answer of LOOKUP_ANSWERS) metrics.hostLookups.inc({ answer }, 0);
  // Every dead-letter reason's series from the start too: a child made at the first dead letter
  // appears at 1 at the next scrape, which `increase()` cannot tell from a series that was
  // always 1, so the first dead letter of a reason would never alert.
  for (const reason of DISPATCHER_DEAD_LETTER_REASONS) metrics.deadLetters.child(reason);
  return metrics;
}

type Result = 'delivered' | 'retry' | 'dead' | 'deferred';

/** The per-delivery series, with their children kept: finding a child builds a key from its label values. */
export class DestinationSeries {
  private readonly latency: TallyHistogramChild;
  private readonly settledBy = new Map<Result, TallyCounterChild>();
  private readonly retriesBy = new Map<string, TallyCounterChild>();
  private readonly deadBy = new Map<string, TallyCounterChild>();
  private readonly requestsBy = new Map<string, TallyHistogramChild>();
  private readonly attemptsBy = new Map<string, TallyCounterChild>();
  private readonly deferredBy = new Map<string, TallyCounterChild>();
  private readonly byDestination = new Map<string, Map<Result, TallyCounterChild>>();

  constructor(private readonly metrics: DispatcherMetrics) {
    this.latency = metrics.deliveryLatency.child();
  }

  /**
   * A delivery settled: its result, and the latency, retry or dead-letter series it feeds.
   * `quarantined`: its outcome could not be written (too large, unencodable) and was set aside
   * instead — counted as quarantined by the caller, not as a dead letter nobody can find.
   */
  settle(destinationId: string, settlement: Settlement, result: Result, receivedAt: number, quarantined = false): void {
    if (result === 'delivered') this.latency.observe(Math.max(0, Date.now() - receivedAt) / 1000);
    else if (result === 'retry' && settlement.kind === 'retry') counterChild(this.retriesBy, settlement.record.tier, this.metrics.retriesScheduled, settlement.record.tier).inc();
    else if (result === 'dead' && settlement.kind === 'dead' && !quarantined) counterChild(this.deadBy, settlement.letter.reason, this.metrics.deadLetters, settlement.letter.reason).inc();
    counterChild(this.settledBy, result, this.metrics.settled, result).inc();
    let own = this.byDestination.get(destinationId);
    if (!own) this.byDestination.set(destinationId, (own = new Map()));
    let child = own.get(result);
    if (!child) own.set(result, (child = this.metrics.destinationDeliveries.child(destinationId, result)));
    child.inc();
  }

  /** One request to one URL: its duration by outcome, and its class and status class. */
  request(outcome: string, seconds: number, verdictClass: string, statusClass: string): void {
    let duration = this.requestsBy.get(outcome);
    if (!duration) this.requestsBy.set(outcome, (duration = this.metrics.requestDuration.child(outcome)));
    duration.observe(seconds);
    const key = `${verdictClass} ${statusClass}`;
    let attempts = this.attemptsBy.get(key);
    if (!attempts) this.attemptsBy.set(key, (attempts = this.metrics.attempts.child(verdictClass, statusClass)));
    attempts.inc();
  }

  deferred(reason: string): void {
    counterChild(this.deferredBy, reason, this.metrics.deferred, reason).inc();
  }

  /** Drops a forgotten destination's gauges, so deleted destinations do not linger on dashboards (counters stay: they must not go back). */
  forget(destinationId: string): void {
    this.byDestination.delete(destinationId);
    this.metrics.circuitState.remove({ destination: destinationId });
    this.metrics.destinationInFlight.remove({ destination: destinationId });
    for (const lane of ['first', 'retry']) this.metrics.destinationBacklog.remove({ destination: destinationId, lane });
  }
}

/** The kept child of a one-label counter, made on first use. */
function counterChild<K>(children: Map<K, TallyCounterChild>, key: K, counter: TallyCounter, labelValue: string): TallyCounterChild {
  let child = children.get(key);
  if (child === undefined) children.set(key, (child = counter.child(labelValue)));
  return child;
}
