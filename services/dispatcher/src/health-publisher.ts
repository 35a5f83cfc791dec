/**
 * Makes this process's view of its destinations visible: their health records on
 * `<ns>.destination-health.v1` (every destination it tracks every HEALTH_INTERVAL_MS, at
 * once on a circuit change or when it becomes congested or catches up — looked at every
 * CONGESTION_CHECK_MS, caught up only after CONGESTION_HOLD_MS of keeping up —, withdrawn when forgotten or at shutdown), the per-destination
 * gauges, and one log line per destination with deferrals every DEFERRAL_LOG_INTERVAL_MS.
 * The records ride in the outcome writer's next transaction.
 */
import type { AvroCodec, Logger } from '@tributary/shared';
import { destinationHealthKey, type TopicNames } from '@tributary/schemas';
import type { Backlog, HealthBoard, Transition } from './health-board.js';
import type { Output } from './ledger.js';
import { CIRCUIT_STATE_VALUE, type DestinationSeries, type DispatcherMetrics } from './metrics.js';

/** Every tracked destination is republished this often; a view older than three intervals is stale to its readers. */
export const HEALTH_INTERVAL_MS = 5_000;
/** A closed, quiet destination with nothing queued is forgotten (its view withdrawn) after this long. */
const HEALTH_IDLE_MS = 5 * 60_000;
const GAUGE_INTERVAL_MS = 1_000;
const DEFERRAL_LOG_INTERVAL_MS = 10_000;
/**
 * How often destinations are looked at for congestion (health-board.ts: stalled or saturated).
 * The router parks a congested destination's new deliveries: the sooner it hears, the fewer
 * of them wait in the first-attempt topic in front of everyone else's.
 */
const CONGESTION_CHECK_MS = 200;

export interface HealthPublisherOptions {
  board: HealthBoard;
  codec: AvroCodec;
  topics: TopicNames;
  instanceId: string;
  metrics: DispatcherMetrics;
  series: DestinationSeries;
  logger: Logger;
  backlog(destinationId: string): Backlog;
  lanes(): { first: { records: number; bytes: number }; retry: { records: number; bytes: number }; stagedBytes: number; inFlight: number };
  exists(destinationId: string): boolean;
  /** There are records for the writer; `urgent`: a circuit or congestion changed, which the router acts on. */
  wake(urgent?: boolean): void;
}

export class HealthPublisher {
  private pending = new Map<string, Output>();
  private readonly timers: NodeJS.Timeout[] = [];
  /** Destinations last published as congested. */
  private readonly congested = new Set<string>();

  constructor(private readonly options: HealthPublisherOptions) {}

  start(): void {
    for (const [run, every] of [
      [() => this.updateGauges(), GAUGE_INTERVAL_MS],
      [() => this.publishAll(), HEALTH_INTERVAL_MS],
      [() => this.logDeferrals(), DEFERRAL_LOG_INTERVAL_MS],
      [() => this.watchCongestion(), CONGESTION_CHECK_MS],
    ] as const) {
      const timer = setInterval(run, every);
      timer.unref();
      this.timers.push(timer);
    }
  }

  /** Stops the timers and withdraws this instance's view of every destination: others' views stand alone. */
  stop(): void {
    for (const timer of this.timers) clearInterval(timer);
    for (const destinationId of [...this.options.board.destinations()]) this.withdraw(destinationId);
  }

  /** A circuit changed: say so in the metrics and the log, and publish it with the next transaction. */
  transition({ destinationId, from, to }: Transition, lastError: string | undefined): void {
    const { metrics, logger, board } = this.options;
    metrics.circuitTransitions.labels(destinationId, to).inc();
    metrics.circuitState.labels(destinationId).set(CIRCUIT_STATE_VALUE[to]);
    const openUntil = board.snapshot(destinationId, this.options.backlog(destinationId), Date.now())?.openUntil;
    const context = { destinationId, from, to, openUntil: openUntil ? new Date(openUntil).toISOString() : undefined, lastError };
    if (to === 'open') logger.warn(context, 'circuit opened: deliveries are deferred without a request until it half-opens');
    else logger.info(context, to === 'closed' ? 'circuit closed: the destination answers again' : 'circuit half-open: probing');
    this.stage(destinationId);
    this.options.wake(true);
  }

  /** The records waiting for a transaction (then forgotten). */
  take(): Output[] {
    if (this.pending.size === 0) return [];
    const records = [...this.pending.values()];
    this.pending = new Map();
    return records;
  }

  /** Records whose transaction failed; newer ones for the same key win. */
  restore(records: Output[]): void {
    for (const record of records) if (!this.pending.has(record.key)) this.pending.set(record.key, record);
  }

  private stage(destinationId: string): void {
    const { codec, topics, board, instanceId } = this.options;
    const snapshot = board.snapshot(destinationId, this.options.backlog(destinationId), Date.now());
    if (!snapshot) return;
    const key = destinationHealthKey(destinationId, instanceId);
    this.pending.set(key, { topic: topics.destinationHealth, key, value: codec.encode(topics.destinationHealth, snapshot) });
  }

  private withdraw(destinationId: string): void {
    const key = destinationHealthKey(destinationId, this.options.instanceId);
    this.pending.set(key, { topic: this.options.topics.destinationHealth, key, value: null });
  }

  /** Publishes at once a destination that became congested, or caught up. */
  private watchCongestion(): void {
    const { board, logger } = this.options;
    const now = Date.now();
    let changed = false;
    for (const destinationId of board.destinations()) {
      const backlog = this.options.backlog(destinationId);
      const congested = board.congested(destinationId, backlog, now);
      if (congested === this.congested.has(destinationId)) continue;
      if (congested) {
        this.congested.add(destinationId);
        logger.info({ destinationId, inFlight: backlog.running, queued: backlog.first + backlog.retry }, 'destination congested (attempts stalled, or every request slot taken with deliveries waiting): new deliveries go through the retry lane');
      } else {
        this.congested.delete(destinationId);
        logger.info({ destinationId }, 'destination caught up');
      }
      this.stage(destinationId);
      changed = true;
    }
    for (const destinationId of this.congested) if (!board.has(destinationId)) this.congested.delete(destinationId);
    if (changed) this.options.wake(true);
  }

  private publishAll(): void {
    const { board, series } = this.options;
    for (const destinationId of board.destinations()) this.stage(destinationId);
    const busy = (destinationId: string) => {
      const { first, retry, running } = this.options.backlog(destinationId);
      return first + retry + running > 0;
    };
    for (const destinationId of board.sweep(Date.now(), HEALTH_IDLE_MS, busy, this.options.exists)) {
      this.withdraw(destinationId);
      series.forget(destinationId);
    }
    if (this.pending.size > 0) this.options.wake();
  }

  private updateGauges(): void {
    const { metrics, board } = this.options;
    for (const destinationId of board.destinations()) {
      const { first, retry, running } = this.options.backlog(destinationId);
      metrics.circuitState.labels(destinationId).set(CIRCUIT_STATE_VALUE[board.state(destinationId)]);
      metrics.destinationBacklog.labels(destinationId, 'first').set(first);
      metrics.destinationBacklog.labels(destinationId, 'retry').set(retry);
      metrics.destinationInFlight.labels(destinationId).set(running);
    }
    const lanes = this.options.lanes();
    for (const lane of ['first', 'retry'] as const) {
      metrics.buffered.labels(lane).set(lanes[lane].records);
      metrics.bufferedBytes.labels(lane).set(lanes[lane].bytes);
    }
    metrics.stagedBytes.set(lanes.stagedBytes);
    metrics.inFlight.set(lanes.inFlight);
  }

  private logDeferrals(): void {
    for (const counts of this.options.board.takeDeferralCounts()) {
      this.options.logger.info({ ...counts, circuit: this.options.board.state(counts.destinationId), intervalMs: DEFERRAL_LOG_INTERVAL_MS }, 'deliveries deferred without a request');
    }
  }
}
