/**
 * The dispatcher's loop: deliveries come in through two lanes (lane-reader.ts) — first
 * attempts and due retries — are admitted or deferred (admission.ts, breaker.ts), wait their
 * turn (fair-queue.ts), are attempted (attempt.ts), and settle into their partition's ledger
 * (ledger.ts) with the records their outcome writes; the outcome writer commits those records
 * with the offsets that pass them, in one transaction (outcome-writer.ts).
 *
 * What one destination can cost the others:
 * - Failing (refused, 5xx, hanging): its circuit opens after a few failures and its
 *   deliveries are deferred to the retry ladder as they are read, without a request — a
 *   decode, an encode and a record each, no slot and no wait. Its queued deliveries are
 *   deferred the moment it opens.
 * - Slow: it holds at most its own request slots and its bounded queue; beyond that its
 *   deliveries are deferred (`backlog_full`), so the buffer every destination's deliveries
 *   pass through never fills with one destination's.
 * - A flood of due retries or replays arrives in its own lane, with its own buffer.
 * - A record nobody can decode, or an outcome too large to write, goes to the quarantine.
 */
import type { Kafka, KafkaMessage } from 'kafkajs';
import {
  configKey,
  quarantineMessage,
  type AvroCodec,
  type ConfigView,
  type Logger,
  type QuarantineCause,
  type Readiness,
  type RetryLadder,
  type TransactionalOutput,
} from '@tributary/shared';
import { destinationHealthKey, type Delivery, type DeliveryLane, type Destination, type TopicNames } from '@tributary/schemas';
import { admit, type BacklogLimits, type DeferReason } from './admission.js';
import { attemptDelivery, type AttemptOutcome } from './attempt.js';
import { attemptRecord, type AttemptFacts } from './attempt-log.js';
import type { BreakerSettings } from './breaker.js';
import { statusClass, requestOutcome } from './classify.js';
import type { ConfigFreshness } from './config-freshness.js';
import { FairQueue, type FairQueueLimits, type Queued, type Started } from './fair-queue.js';
import { HealthBoard, type Transition } from './health-board.js';
import { LaneReader, type LaneHandler } from './lane-reader.js';
import { outputBytes, PartitionLedger, type Output } from './ledger.js';
import { CIRCUIT_STATE_VALUE, DestinationSeries, type DispatcherMetrics } from './metrics.js';
import { deferral, type Settlement } from './next-step.js';
import { OutcomeWriter, type OwnedLedger } from './outcome-writer.js';
import type { WebhookClient } from './webhook-client.js';

/** The event loop is probed this often; a probe later than LOOP_GAP_MS means it was blocked. */
const LOOP_PROBE_MS = 20;
const LOOP_GAP_MS = 100;
/**
 * The health of every destination this process tracks is published this often (and at once
 * on a circuit change); a view older than three intervals is stale to its readers.
 */
const HEALTH_INTERVAL_MS = 5_000;
/** A closed, quiet destination with nothing queued is forgotten (its health withdrawn) after this long. */
const HEALTH_IDLE_MS = 5 * 60_000;
/** Deferrals are logged one line per destination per this interval, not one per delivery. */
const DEFERRAL_LOG_INTERVAL_MS = 10_000;
/** Bytes of outcome records per transaction. */
const MAX_TRANSACTION_BYTES = 8 * 1024 * 1024;
/** Headroom kept under the record size limit for the record's framing. */
const RECORD_OVERHEAD_BYTES = 512;

export interface DispatcherLimits extends FairQueueLimits, BacklogLimits {
  maxBuffered: number;
  maxBufferedBytes: number;
  maxStagedBytes: number;
  maxRecordBytes: number;
}

export interface DispatcherOptions {
  kafka: Kafka;
  codec: AvroCodec;
  topics: TopicNames;
  config: ConfigView;
  freshness: ConfigFreshness;
  client: WebhookClient;
  output: TransactionalOutput;
  logger: Logger;
  metrics: DispatcherMetrics;
  readiness: Readiness;
  ladder: RetryLadder;
  breaker: BreakerSettings;
  limits: DispatcherLimits;
  commitIntervalMs: number;
  /** Test-only fault injection (DELIVERY_TEST_COMMIT_DELAY): see OutcomeWriterOptions. */
  delayBeforeCommitMs?: number;
  disableOnGone: boolean;
  instanceId: string;
  /** Consumer group prefix; the lanes use `<prefix>` (first attempts) and `<prefix>-retries`. */
  groupId: string;
  /** The process should stop: the outcome writer met an error no retry fixes. */
  onFatal(error: unknown): void;
}

interface Job extends Queued {
  delivery: Delivery;
  ledger: PartitionLedger;
  offset: bigint;
  /** When this process read the record: a config check started after it covers it. */
  readAt: number;
  probe: boolean;
}

interface LaneState {
  reader: LaneReader;
  topic: string;
  groupId: string;
  ledgers: Map<number, PartitionLedger>;
  unsettled: number;
  unsettledBytes: number;
}

export class Dispatcher implements LaneHandler {
  private readonly queue: FairQueue<Job>;
  private readonly health: HealthBoard;
  private readonly writer: OutcomeWriter;
  private readonly lanes: Record<DeliveryLane, LaneState>;
  private listeners = new Set<() => void>();
  private stopping = false;
  private lastProbeAt = Date.now();
  private blockedUntil = 0;
  private readonly timers: NodeJS.Timeout[] = [];
  /** Health records (and withdrawals) waiting for the next transaction. */
  private pendingHealth = new Map<string, Output>();
  private running = 0;
  private readonly series: DestinationSeries;

  constructor(private readonly options: DispatcherOptions) {
    this.series = new DestinationSeries(options.metrics);
    const { kafka, codec, topics, logger, readiness, groupId } = options;
    this.queue = new FairQueue<Job>(options.limits);
    this.health = new HealthBoard(options.breaker, options.instanceId);
    const lane = (name: DeliveryLane, topic: string, group: string): LaneState => ({
      reader: new LaneReader({ kafka, codec, lane: name, topic, groupId: group, handler: this, logger, readiness }),
      topic,
      groupId: group,
      ledgers: new Map(),
      unsettled: 0,
      unsettledBytes: 0,
    });
    this.lanes = { first: lane('first', topics.deliveries, groupId), retry: lane('retry', topics.dueRetries, `${groupId}-retries`) };
    this.writer = new OutcomeWriter({
      output: options.output,
      kafka,
      logger,
      metrics: options.metrics,
      readiness,
      intervalMs: options.commitIntervalMs,
      delayBeforeCommitMs: options.delayBeforeCommitMs ?? 0,
      maxTransactionBytes: MAX_TRANSACTION_BYTES,
      ledgers: () => this.ownedLedgers(),
      extras: () => this.takeHealthRecords(),
      restoreExtras: (records) => {
        for (const record of records) if (!this.pendingHealth.has(record.key)) this.pendingHealth.set(record.key, record);
      },
      onFatal: options.onFatal,
    });
  }

  async start(): Promise<void> {
    this.writer.start();
    await Promise.all([this.lanes.first.reader.start(), this.lanes.retry.reader.start()]);
    const probe = setInterval(() => this.probeLoop(), LOOP_PROBE_MS);
    const gauges = setInterval(() => this.updateGauges(), 1_000);
    const healthTick = setInterval(() => this.publishHealth(), HEALTH_INTERVAL_MS);
    const deferrals = setInterval(() => this.logDeferrals(), DEFERRAL_LOG_INTERVAL_MS);
    for (const timer of [probe, gauges, healthTick, deferrals]) {
      timer.unref();
      this.timers.push(timer);
    }
  }

  async stop(drainTimeoutMs: number): Promise<void> {
    const { logger } = this.options;
    this.stopping = true;
    for (const timer of this.timers) clearInterval(timer);
    for (const lane of Object.values(this.lanes)) lane.reader.pause();
    const abandoned = this.queue.removeQueued(() => true);
    for (const job of abandoned) this.release(job);
    const deadline = Date.now() + drainTimeoutMs;
    while (this.running > 0 && Date.now() < deadline) await this.changed(Math.min(100, deadline - Date.now()));
    if (this.running > 0) logger.warn({ running: this.running }, 'shutdown: attempts still running at the drain timeout; their deliveries will be read again');
    // This instance's view of its destinations is withdrawn: others' views stand alone.
    for (const destinationId of [...this.health.destinations()]) this.stageHealthWithdrawal(destinationId);
    await this.writer.stop(Math.max(1_000, deadline - Date.now()));
    await Promise.all(Object.values(this.lanes).map((lane) => lane.reader.stop()));
    logger.info({ abandonedQueued: abandoned.length }, 'dispatcher stopped');
  }

  // ——— LaneHandler: what the lane readers call ———

  hasRoom(lane: DeliveryLane): boolean {
    const state = this.lanes[lane];
    const { limits } = this.options;
    return state.unsettled < limits.maxBuffered && state.unsettledBytes < limits.maxBufferedBytes && this.stagedBytes() < limits.maxStagedBytes;
  }

  changed(timeoutMs: number): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.listeners.delete(done);
        resolve();
      };
      const timer = setTimeout(done, timeoutMs);
      this.listeners.add(done);
    });
  }

  ledger(lane: DeliveryLane, partition: number, firstOffset: bigint): PartitionLedger {
    const state = this.lanes[lane];
    let ledger = state.ledgers.get(partition);
    if (!ledger) {
      ledger = new PartitionLedger(state.topic, partition, firstOffset);
      state.ledgers.set(partition, ledger);
    }
    return ledger;
  }

  isCurrent(lane: DeliveryLane, ledger: PartitionLedger): boolean {
    return this.lanes[lane].ledgers.get(ledger.partition) === ledger;
  }

  assigned(lane: DeliveryLane, partitions: number[]): void {
    const state = this.lanes[lane];
    const kept = new Set(partitions);
    for (const [partition, ledger] of state.ledgers) {
      if (kept.has(partition)) continue;
      state.ledgers.delete(partition);
      const abandoned = this.queue.removeQueued((job) => job.ledger === ledger);
      for (const job of abandoned) {
        if (job.probe) this.health.cancelProbe(job.delivery.destinationId);
        this.release(job);
      }
      this.options.logger.info(
        { lane, partition, abandonedQueued: abandoned.length, stillRunning: ledger.unsettled - abandoned.length },
        'partition revoked; what was not committed is left to the next owner',
      );
    }
    this.notify();
  }

  accept(lane: DeliveryLane, ledger: PartitionLedger, offset: bigint, message: KafkaMessage, delivery: Delivery): void {
    const now = Date.now();
    const bytes = (message.value?.length ?? 0) + (message.key?.length ?? 0);
    ledger.read(offset);
    const state = this.lanes[lane];
    state.unsettled++;
    state.unsettledBytes += bytes;
    const job: Job = { delivery, ledger, offset, readAt: now, queuedAt: now, probe: false, lane, bytes };
    const { destinationId } = delivery;
    // The probe may not have run yet after a block that just ended.
    if (now - this.lastProbeAt > LOOP_GAP_MS) this.blockedUntil = now;
    const { admission: circuit, transition } = this.health.admit(destinationId, now);
    if (transition) this.onTransition(transition, undefined);
    const backlog = this.queue.backlog(destinationId);
    const decision = admit(
      circuit,
      { queued: backlog.first + backlog.retry, queuedBytes: backlog.bytes, running: backlog.running, oldestQueuedAt: backlog.oldestQueuedAt },
      bytes,
      this.options.limits,
      now,
      now - this.blockedUntil > LOOP_GAP_MS,
    );
    // A destination that is gone or disabled is not deferred: its deliveries end at once (attempt.ts).
    if (decision.kind === 'defer' && this.options.config.destination(destinationId)?.enabled) {
      this.defer(job, decision.reason, now);
      return;
    }
    job.probe = decision.kind === 'queue' && decision.probe;
    this.queue.enqueue(destinationId, job);
    this.pump();
  }

  quarantine(lane: DeliveryLane, ledger: PartitionLedger, offset: bigint, message: KafkaMessage, cause: QuarantineCause): void {
    const { codec, topics, metrics, logger } = this.options;
    ledger.read(offset);
    const { topic, message: record } = quarantineMessage(
      codec,
      topics,
      'dispatcher',
      { topic: ledger.topic, partition: ledger.partition, offset: offset.toString(), key: message.key, value: message.value, timestamp: message.timestamp },
      cause,
      Date.now(),
    );
    ledger.settle(offset, [{ topic, key: String(record.key), value: record.value as Buffer }]);
    metrics.quarantined.labels(ledger.topic, cause.reason).inc();
    logger.error({ lane, topic: ledger.topic, partition: ledger.partition, offset: offset.toString(), reason: cause.reason, error: cause.error }, 'unreadable delivery record quarantined');
    this.writer.wake();
  }

  // ——— attempts ———

  private pump(): void {
    for (const started of this.queue.startRunnable()) {
      this.running++;
      void this.run(started);
    }
    this.options.metrics.inFlight.set(this.queue.inFlight);
  }

  private async run({ destinationId, item: job }: Started<Job>): Promise<void> {
    let outcome: AttemptOutcome | undefined;
    try {
      outcome = await attemptDelivery(this.options, job.delivery, job.readAt);
    } catch (error) {
      // Not expected (the HTTP edge reports failures as results): the delivery stays unsettled
      // and is read again by the next owner of its partition; a restart is the cure.
      this.options.logger.error({ err: error, deliveryId: job.delivery.deliveryId }, 'attempt failed unexpectedly; stopping so its delivery is read again');
      this.options.onFatal(error);
    } finally {
      this.queue.finish(destinationId);
      this.running--;
    }
    if (outcome) {
      this.judge(job, outcome);
      this.settleAttempt(job, outcome);
    }
    this.pump();
    this.notify();
  }

  /** Tells the destination's breaker what the attempt showed; opening it defers its queue. */
  private judge(job: Job, outcome: AttemptOutcome): void {
    const { destinationId } = job.delivery;
    const { verdict } = outcome;
    if (outcome.kind !== 'attempt' || !verdict) {
      if (job.probe) this.health.cancelProbe(destinationId);
      return;
    }
    const result =
      verdict.kind === 'retry' ? ({ kind: 'failure', error: verdict.error, retryAfterMs: verdict.retryAfterMs } as const) : ({ kind: 'success' } as const);
    const transition = this.health.recordAttempt(destinationId, result, job.probe, Date.now());
    if (transition) this.onTransition(transition, verdict.kind === 'retry' ? verdict.error : undefined);
  }

  private onTransition({ destinationId, from, to }: Transition, lastError: string | undefined): void {
    const { metrics, logger } = this.options;
    metrics.circuitTransitions.labels(destinationId, to).inc();
    metrics.circuitState.labels(destinationId).set(CIRCUIT_STATE_VALUE[to]);
    const snapshot = this.health.snapshot(destinationId, this.backlogOf(destinationId), Date.now());
    const context = { destinationId, from, to, openUntil: snapshot?.openUntil ? new Date(snapshot.openUntil).toISOString() : undefined, lastError };
    if (to === 'open') logger.warn(context, 'circuit opened: deliveries are deferred without a request until it half-opens');
    else logger.info(context, to === 'closed' ? 'circuit closed: the destination answers again' : 'circuit half-open: probing');
    this.stageHealth(destinationId);
    this.writer.wake();
    if (to === 'open') {
      const now = Date.now();
      for (const job of this.queue.takeQueued(destinationId)) this.defer(job, 'circuit_open', now);
    }
  }

  // ——— settling ———

  private defer(job: Job, reason: DeferReason, now: number): void {
    const { logger, ladder } = this.options;
    const { delivery } = job;
    this.series.deferred(reason);
    this.health.noteDeferral(delivery.destinationId, reason, now);
    const settlement = deferral(delivery, reason, ladder, now);
    if (logger.isLevelEnabled('debug')) {
      logger.debug({ deliveryId: delivery.deliveryId, destinationId: delivery.destinationId, reason, result: settlement.kind === 'dead' ? 'dead' : 'deferred' }, 'delivery deferred');
    }
    this.settle(job, settlement, { delivery, lane: job.lane, kind: 'deferred', attempt: delivery.attempts, settlement, startedAt: now, durationMs: 0, targets: [], deferReason: reason });
  }

  private settleAttempt(job: Job, outcome: AttemptOutcome): void {
    const { logger } = this.options;
    const { delivery } = job;
    const { settlement } = outcome;
    const facts: AttemptFacts = {
      delivery,
      lane: job.lane,
      kind: outcome.kind,
      attempt: outcome.attempt,
      settlement,
      startedAt: outcome.startedAt,
      durationMs: outcome.durationMs,
      targets: outcome.targets,
    };
    const extra: Output[] = [];
    if (settlement.kind === 'dead' && settlement.letter.reason === 'gone' && this.options.disableOnGone && outcome.destination?.enabled) {
      extra.push(this.disabling(outcome.destination));
    }
    this.settle(job, settlement, facts, extra);
    const context = {
      messageId: delivery.messageId,
      deliveryId: delivery.deliveryId,
      destinationId: delivery.destinationId,
      lane: job.lane,
      attempt: outcome.attempt,
      durationMs: outcome.durationMs,
      urls: outcome.targets.map((target) => ({ target: `webhooks[${target.index}]`, outcome: requestOutcome(target.verdict), status: target.verdict.status })),
    };
    switch (settlement.kind) {
      case 'delivered':
        logger.info({ ...context, result: 'delivered', statusClass: statusClass(settlement.status) }, 'delivered');
        break;
      case 'retry':
        logger.info(
          {
            ...context,
            result: 'retry',
            statusClass: statusClass(settlement.record.delivery.lastStatus),
            tier: settlement.record.tier,
            dueAt: new Date(settlement.record.dueAt).toISOString(),
            reason: settlement.record.delivery.lastError,
          },
          'delivery failed; retry scheduled',
        );
        break;
      case 'dead':
        logger.info(
          { ...context, result: 'dead', statusClass: statusClass(settlement.letter.status), reason: settlement.letter.reason, error: settlement.letter.error },
          'delivery dead-lettered',
        );
        break;
    }
    if (logger.isLevelEnabled('debug')) logger.debug({ deliveryId: delivery.deliveryId, body: delivery.body.toString('utf8') }, 'delivery body');
  }

  /**
   * Stages the records an outcome writes in its partition's ledger: the retry record or dead
   * letter, the attempt-log record, and `extra`. A record too large for the broker would
   * wedge every transaction after it: the delivery goes to the quarantine instead.
   */
  private settle(job: Job, settlement: Settlement, facts: AttemptFacts, extra: Output[] = []): void {
    const { codec, topics, metrics } = this.options;
    const { delivery } = job;
    this.release(job);
    // Revoked meanwhile: the next owner reads it again from the committed offset.
    if (!this.isCurrent(job.lane, job.ledger)) return;
    const outputs: Output[] = [];
    const key = delivery.deliveryId;
    let result: 'delivered' | 'retry' | 'dead' | 'deferred' = facts.kind === 'deferred' && settlement.kind === 'retry' ? 'deferred' : settlement.kind;
    if (settlement.kind === 'retry') {
      const topic = topics.retry(settlement.record.tier);
      outputs.push({ topic, key, value: codec.encode(topic, settlement.record) });
    } else if (settlement.kind === 'dead') {
      outputs.push({ topic: topics.deadLetters, key, value: codec.encode(topics.deadLetters, settlement.letter) });
    }
    const limit = this.options.limits.maxRecordBytes - RECORD_OVERHEAD_BYTES;
    if (outputs.some((output) => outputBytes(output) > limit)) {
      outputs.length = 0;
      outputs.push(this.tooLarge(job, limit));
      result = 'dead';
    } else {
      switch (settlement.kind) {
        case 'delivered':
          metrics.deliveryLatency.observe(Math.max(0, Date.now() - delivery.receivedAt) / 1000);
          break;
        case 'retry':
          if (result === 'retry') metrics.retriesScheduled.labels(settlement.record.tier).inc();
          break;
        case 'dead':
          metrics.deadLetters.labels(settlement.letter.reason).inc();
          break;
      }
    }
    // Every attempt and every end goes to the delivery log; a deferral that only moves the
    // delivery up the ladder does not (it is counted, and logged per destination): an open
    // circuit defers each waiting delivery several times, and the log would grow with it.
    if (facts.kind !== 'deferred' || settlement.kind === 'dead') outputs.push({ topic: topics.attempts, key, value: codec.encode(topics.attempts, attemptRecord(facts)) });
    outputs.push(...extra);
    this.series.settled(delivery.destinationId, result);
    job.ledger.settle(job.offset, outputs);
    this.writer.wake();
  }

  private tooLarge(job: Job, limit: number): Output {
    const { codec, topics, metrics, logger } = this.options;
    const { delivery, ledger, offset } = job;
    const error = `the outcome record of this delivery would exceed ${limit} bytes (KAFKA_MAX_RECORD_BYTES); the delivery was set aside`;
    const { topic, message } = quarantineMessage(
      codec,
      topics,
      'dispatcher',
      { topic: ledger.topic, partition: ledger.partition, offset: offset.toString(), key: Buffer.from(delivery.deliveryId), value: codec.encode(topics.deliveries, delivery), timestamp: String(job.readAt) },
      { reason: 'too_large', error },
      Date.now(),
    );
    metrics.quarantined.labels(ledger.topic, 'too_large').inc();
    logger.error({ deliveryId: delivery.deliveryId, destinationId: delivery.destinationId, limit }, 'outcome too large to write; delivery quarantined');
    return { topic, key: String(message.key), value: message.value as Buffer };
  }

  /** The config record that disables a destination whose every URL answered 410 Gone. */
  private disabling(destination: Destination): Output {
    const { codec, topics, logger } = this.options;
    logger.warn({ destinationId: destination.id }, 'every URL answered 410 Gone: disabling the destination (DELIVERY_DISABLE_ON_GONE)');
    return {
      topic: topics.config,
      key: configKey('destination', destination.id),
      value: codec.encode(topics.config, { entity: { ...destination, enabled: false }, updatedAt: Date.now() }),
    };
  }

  private release(job: Job): void {
    const state = this.lanes[job.lane];
    state.unsettled--;
    state.unsettledBytes -= job.bytes;
    this.notify();
  }

  private notify(): void {
    const listeners = this.listeners;
    this.listeners = new Set();
    for (const listener of listeners) listener();
  }

  private stagedBytes(): number {
    let total = 0;
    for (const lane of Object.values(this.lanes)) for (const ledger of lane.ledgers.values()) total += ledger.stagedBytes;
    return total;
  }

  private *ownedLedgers(): Iterable<OwnedLedger> {
    for (const lane of Object.values(this.lanes)) for (const ledger of lane.ledgers.values()) yield { ledger, groupId: lane.groupId };
  }

  // ——— health ———

  private backlogOf(destinationId: string): { first: number; retry: number; running: number } {
    const { first, retry, running } = this.queue.backlog(destinationId);
    return { first, retry, running };
  }

  private stageHealth(destinationId: string): void {
    const { codec, topics } = this.options;
    const snapshot = this.health.snapshot(destinationId, this.backlogOf(destinationId), Date.now());
    if (!snapshot) return;
    const key = destinationHealthKey(destinationId, this.options.instanceId);
    this.pendingHealth.set(key, { topic: topics.destinationHealth, key, value: codec.encode(topics.destinationHealth, snapshot) });
  }

  private stageHealthWithdrawal(destinationId: string): void {
    const key = destinationHealthKey(destinationId, this.options.instanceId);
    this.pendingHealth.set(key, { topic: this.options.topics.destinationHealth, key, value: null });
  }

  private takeHealthRecords(): Output[] {
    if (this.pendingHealth.size === 0) return [];
    const records = [...this.pendingHealth.values()];
    this.pendingHealth = new Map();
    return records;
  }

  private publishHealth(): void {
    const now = Date.now();
    for (const destinationId of this.health.destinations()) this.stageHealth(destinationId);
    const forgotten = this.health.sweep(
      now,
      HEALTH_IDLE_MS,
      (destinationId) => {
        const backlog = this.queue.backlog(destinationId);
        return backlog.first + backlog.retry + backlog.running > 0;
      },
      (destinationId) => this.options.config.destination(destinationId) !== undefined,
    );
    for (const destinationId of forgotten) {
      this.stageHealthWithdrawal(destinationId);
      this.series.forget(destinationId);
    }
    if (this.pendingHealth.size > 0) this.writer.wake();
  }

  private updateGauges(): void {
    const { metrics } = this.options;
    for (const destinationId of this.health.destinations()) {
      const { first, retry, running } = this.queue.backlog(destinationId);
      metrics.circuitState.labels(destinationId).set(CIRCUIT_STATE_VALUE[this.health.state(destinationId)]);
      metrics.destinationBacklog.labels(destinationId, 'first').set(first);
      metrics.destinationBacklog.labels(destinationId, 'retry').set(retry);
      metrics.destinationInFlight.labels(destinationId).set(running);
    }
    for (const lane of ['first', 'retry'] as const) {
      metrics.buffered.labels(lane).set(this.lanes[lane].unsettled);
      metrics.bufferedBytes.labels(lane).set(this.lanes[lane].unsettledBytes);
    }
    metrics.stagedBytes.set(this.stagedBytes());
    metrics.inFlight.set(this.queue.inFlight);
  }

  private logDeferrals(): void {
    for (const counts of this.health.takeDeferralCounts()) {
      this.options.logger.info(
        { ...counts, circuit: this.health.state(counts.destinationId), intervalMs: DEFERRAL_LOG_INTERVAL_MS },
        'deliveries deferred without a request',
      );
    }
  }

  /** Notes when this process's event loop was blocked: silence meanwhile says nothing about a destination. */
  private probeLoop(): void {
    const now = Date.now();
    if (now - this.lastProbeAt > LOOP_GAP_MS) this.blockedUntil = now;
    this.lastProbeAt = now;
  }
}
