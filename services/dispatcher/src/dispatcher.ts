/**
 * The dispatcher's loop: deliveries come in through two lanes (lane-reader.ts, lanes.ts) —
 * first attempts and due retries — are admitted or deferred (admission.ts, breaker.ts), wait
 * their turn (fair-queue.ts), are attempted (attempt.ts), and settle into their partition's
 * ledger (ledger.ts) with the records their outcome writes (outcome-records.ts); the outcome
 * writer commits those records with the offsets that pass them, in one transaction
 * (outcome-writer.ts). Health is published beside it (health-publisher.ts).
 *
 * What one destination can cost the others:
 * - Failing (refused, 5xx, hanging): its circuit opens after a few failures and its
 *   deliveries are deferred to the retry ladder as they are read, without a request — a
 *   decode, an encode and a record each, no slot and no wait. Its queued deliveries are
 *   deferred from the moment it opens, a few per turn of the event loop.
 * - Slow: it holds at most its own request slots and its bounded queue; beyond that its
 *   deliveries are deferred (`backlog_full`), so the buffer every destination's deliveries
 *   pass through never fills with one destination's.
 * - A flood of due retries or replays arrives in its own lane, with its own buffer.
 * - A record nobody can decode, or an outcome too large to write, goes to the quarantine.
 */
import type { Kafka, KafkaMessage } from 'kafkajs';
import { deferral, type AvroCodec, type ConfigFreshness, type ConfigView, type Logger, type QuarantineCause, type Readiness, type RetryLadder, type TransactionalOutput } from '@tributary/shared';
import type { Delivery, DeliveryLane, TopicNames } from '@tributary/schemas';
import { admit, type BacklogLimits, type DeferReason } from './admission.js';
import { attemptDelivery, type AttemptDeps, type AttemptOutcome } from './attempt.js';
import type { AttemptFacts } from './attempt-log.js';
import type { BreakerSettings } from './breaker.js';
import { FairQueue, type FairQueueLimits, type Queued, type Started } from './fair-queue.js';
import { CONGESTION_HOLD_MS, HealthBoard } from './health-board.js';
import { HealthPublisher } from './health-publisher.js';
import { inTurns } from './in-turns.js';
import { LaneReader, type LaneHandler } from './lane-reader.js';
import { LANES, Lanes, type LaneLimits } from './lanes.js';
import { LoopWatch } from './loop-watch.js';
import type { Output, PartitionLedger } from './ledger.js';
import { DestinationSeries, type DispatcherMetrics } from './metrics.js';
import { AttemptLog } from './outcome-log.js';
import { disablingRecord, onGone, outcomeRecords, quarantineOutput } from './outcome-records.js';
import { OutcomeWriter } from './outcome-writer.js';
import { RoomWaits } from './room-waits.js';
import type { WebhookClient } from './webhook-client.js';

/** Bytes of outcome records per transaction. */
const MAX_TRANSACTION_BYTES = 8 * 1024 * 1024;

/**
 * Deferrals per turn of the event loop when a destination's whole queue is deferred at once (its
 * circuit opened, or it holds a full lane). A hanging destination's queue is 1,000 and more when
 * its first requests time out, and the dispatcher spends 140–170 µs of CPU per deferral, much
 * of it in that loop (the encodes): in one loop it could hold every other destination's attempts
 * and the lanes' fetches for 100 ms and more; in turns of 64, for some 10 ms at a time. (The
 * trickle's stall 4–5 s into the noisy neighbour's hanging burst has other parts too: ANALYSIS.md,
 * afternoon of 27 November.)
 */
const DEFERRALS_PER_TURN = 64;

/** The topic and consumer group of each lane; main.ts measures their lag with the same names. */
export function laneSources(topics: TopicNames, groupId: string): Record<DeliveryLane, { topic: string; groupId: string }> {
  return { first: { topic: topics.deliveries, groupId }, retry: { topic: topics.dueRetries, groupId: `${groupId}-retries` } };
}

/** The fair queue's `stalledAfterMs` is `maxQueueWaitMs`: one notion of a stalled destination. */
export interface DispatcherLimits extends Omit<FairQueueLimits, 'stalledAfterMs'>, BacklogLimits, LaneLimits {
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
  sessionTimeoutMs: number;
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

/** How often deliveries waiting for a slot look again whether a stalled destination freed one. */
const ROOM_RECHECK_MS = 100;

export class Dispatcher implements LaneHandler {
  private readonly queue: FairQueue<Job>;
  private readonly board: HealthBoard;
  private readonly lanes: Lanes;
  private readonly readers: LaneReader[];
  private readonly writer: OutcomeWriter;
  private readonly health: HealthPublisher;
  private readonly series: DestinationSeries;
  private readonly attemptDeps: AttemptDeps;
  private readonly attemptLog: AttemptLog;
  private readonly waits = new RoomWaits((lane) => this.hasRoom(lane));
  private running = 0;
  private readonly loop = new LoopWatch();
  /** Set while deliveries wait for a slot that only time can free (fair-queue.ts: stalled destinations). */
  private roomTimer: NodeJS.Timeout | undefined;

  constructor(private readonly options: DispatcherOptions) {
    const { kafka, codec, topics, logger, readiness, groupId, metrics } = options;
    this.queue = new FairQueue<Job>({ ...options.limits, stalledAfterMs: options.limits.maxQueueWaitMs });
    this.board = new HealthBoard(options.breaker, options.instanceId, { maxWaitMs: options.limits.maxQueueWaitMs, maxInFlight: options.limits.maxInFlightPerDestination, holdMs: CONGESTION_HOLD_MS });
    this.series = new DestinationSeries(metrics);
    this.attemptLog = new AttemptLog(logger);
    this.attemptDeps = { config: options.config, freshness: options.freshness, client: options.client, ladder: options.ladder, series: this.series };
    const sources = laneSources(topics, groupId);
    this.lanes = new Lanes(options.limits, sources);
    this.readers = LANES.map((lane) => new LaneReader({ kafka, codec, lane, ...sources[lane], sessionTimeoutMs: options.sessionTimeoutMs, handler: this, logger, readiness }));
    this.health = new HealthPublisher({
      board: this.board,
      codec,
      topics,
      instanceId: options.instanceId,
      metrics,
      series: this.series,
      logger,
      backlog: (destinationId) => this.queue.backlog(destinationId),
      lanes: () => ({ first: this.lanes.buffered('first'), retry: this.lanes.buffered('retry'), stagedBytes: this.lanes.stagedBytes(), inFlight: this.queue.inFlight }),
      exists: (destinationId) => options.config.destination(destinationId) !== undefined,
      wake: (urgent) => this.writer.wake(urgent),
    });
    this.writer = new OutcomeWriter({
      output: options.output,
      kafka,
      logger,
      metrics,
      readiness,
      intervalMs: options.commitIntervalMs,
      delayBeforeCommitMs: options.delayBeforeCommitMs ?? 0,
      maxTransactionBytes: MAX_TRANSACTION_BYTES,
      ledgers: () => this.lanes.owned(),
      extras: () => this.health.take(),
      restoreExtras: (records) => this.health.restore(records),
      onFatal: options.onFatal,
      onCommitted: () => this.waits.changed(),
    });
  }

  async start(): Promise<void> {
    this.writer.start();
    await Promise.all(this.readers.map((reader) => reader.start()));
    this.health.start();
    this.attemptLog.start();
    this.loop.start();
  }

  async stop(drainTimeoutMs: number): Promise<void> {
    this.loop.stop();
    clearTimeout(this.roomTimer);
    for (const reader of this.readers) reader.pause();
    const abandoned = this.unqueued(this.queue.removeQueued(() => true));
    for (const job of abandoned) this.release(job);
    const deadline = Date.now() + drainTimeoutMs;
    while (this.running > 0 && Date.now() < deadline) await this.waits.wait('any', Math.min(100, deadline - Date.now()));
    if (this.running > 0) this.options.logger.warn({ running: this.running }, 'shutdown: attempts still running at the drain timeout; their deliveries will be read again');
    this.health.stop();
    this.attemptLog.stop();
    await this.writer.stop(Math.max(1_000, deadline - Date.now()));
    await Promise.all(this.readers.map((reader) => reader.stop()));
    this.options.logger.info({ abandonedQueued: abandoned.length }, 'dispatcher stopped');
  }

  // ——— LaneHandler: what the lane readers call ———

  hasRoom(lane: DeliveryLane): boolean {
    if (this.lanes.hasRoom(lane)) return true;
    // The lane is full, so nothing new is read and judged on arrival: judge what is queued.
    this.shedBacklog(lane, Date.now());
    return this.lanes.hasRoom(lane);
  }

  /**
   * Defers the queued deliveries of a destination that holds the lane (the backlog rule of
   * admission.ts, applied to what is already queued). The rule is otherwise applied as records
   * are read, but a full lane reads none: a receiver hanging until the timeout filled the lane
   * within a second and held every other destination behind it until its circuit opened.
   */
  private shedBacklog(lane: DeliveryLane, now: number): void {
    const buffered = Math.max(1, this.lanes.buffered(lane).records);
    const fill = this.lanes.fill(lane);
    const busy = this.loop.busy(now);
    for (const destinationId of [...this.queue.activeDestinations()]) {
      const backlog = this.queue.backlog(destinationId);
      const pressure = { fill, destinationShare: (backlog.first + backlog.retry + backlog.running) / buffered };
      const decision = admit('attempt', pressure, backlog, this.options.limits, now, busy);
      if (decision.kind !== 'defer' || !this.options.config.destination(destinationId)?.enabled) continue;
      this.deferQueued(destinationId, 'backlog_full');
    }
  }

  waitForRoom(lane: DeliveryLane, timeoutMs: number): Promise<void> {
    return this.waits.wait(lane, timeoutMs);
  }

  ledger(lane: DeliveryLane, partition: number, firstOffset: bigint): PartitionLedger {
    return this.lanes.ledger(lane, partition, firstOffset);
  }

  isCurrent(lane: DeliveryLane, ledger: PartitionLedger): boolean {
    return this.lanes.isCurrent(lane, ledger);
  }

  assigned(lane: DeliveryLane, partitions: number[]): void {
    for (const ledger of this.lanes.keepOnly(lane, partitions)) {
      const abandoned = this.unqueued(this.queue.removeQueued((job) => job.ledger === ledger));
      for (const job of abandoned) this.release(job);
      this.options.logger.info(
        { lane, partition: ledger.partition, abandonedQueued: abandoned.length, stillRunning: ledger.unsettled - abandoned.length },
        'partition revoked; what was not committed is left to the next owner',
      );
    }
    this.waits.wakeAll();
  }

  accept(lane: DeliveryLane, ledger: PartitionLedger, offset: bigint, message: KafkaMessage, delivery: Delivery): void {
    const now = Date.now();
    const bytes = (message.value?.length ?? 0) + (message.key?.length ?? 0);
    ledger.read(offset);
    this.lanes.read(lane, bytes);
    const job: Job = { delivery, ledger, offset, readAt: now, queuedAt: now, probe: false, lane, bytes };
    const { destinationId } = delivery;
    const { admission: circuit, transition } = this.board.admit(destinationId, now);
    if (transition) this.health.transition(transition, undefined);
    const backlog = this.queue.backlog(destinationId);
    const held = backlog.first + backlog.retry + backlog.running;
    const pressure = { fill: this.lanes.fill(lane), destinationShare: held / Math.max(1, this.lanes.buffered(lane).records) };
    const decision = admit(circuit, pressure, backlog, this.options.limits, now, this.loop.busy(now));
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
    const poison = { topic: ledger.topic, partition: ledger.partition, offset: offset.toString(), key: message.key, value: message.value, timestamp: message.timestamp };
    ledger.settle(offset, [quarantineOutput(codec, topics, poison, cause, Date.now())]);
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
    // Every slot is taken and nothing may finish for up to the webhook timeout; a destination
    // stalling meanwhile frees room (fair-queue.ts), and no event says when.
    if (this.queue.waitingForRoom && this.roomTimer === undefined) {
      this.roomTimer = setTimeout(() => {
        this.roomTimer = undefined;
        this.pump();
      }, ROOM_RECHECK_MS);
      this.roomTimer.unref();
    }
  }

  private async run({ destinationId, item: job }: Started<Job>): Promise<void> {
    let outcome: AttemptOutcome | undefined;
    try {
      outcome = await attemptDelivery(this.attemptDeps, job.delivery, job.readAt);
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
      const extra: Output[] = [];
      const { settlement, destination, targets } = outcome;
      const gone = this.options.disableOnGone ? onGone(settlement, targets, destination, this.options.config.destination(destinationId)) : 'none';
      if (gone === 'disable' && destination) {
        this.options.logger.warn({ destinationId }, 'every URL answered 410 Gone: disabling the destination (DELIVERY_DISABLE_ON_GONE)');
        extra.push(disablingRecord(this.options.codec, this.options.topics, destination, Date.now()));
      } else if (gone === 'config_changed') {
        this.options.logger.warn({ destinationId }, 'every URL answered 410 Gone, but the destination was changed (or deleted) while the attempt ran: not disabling it (DELIVERY_DISABLE_ON_GONE)');
      }
      this.settle(job, { delivery: job.delivery, lane: job.lane, ...outcome }, extra);
      this.attemptLog.log(job.delivery, job.lane, outcome);
    }
    this.pump();
    this.waits.changed();
  }

  /** Tells the destination's breaker what the attempt showed; opening it defers its queue. */
  private judge(job: Job, outcome: AttemptOutcome): void {
    const { destinationId } = job.delivery;
    const { verdict } = outcome;
    if (outcome.kind !== 'attempt' || !verdict) {
      if (job.probe) this.board.cancelProbe(destinationId);
      return;
    }
    const failed = verdict.kind === 'retry';
    const result = failed ? ({ kind: 'failure', error: verdict.error, retryAfterMs: verdict.retryAfterMs } as const) : ({ kind: 'success' } as const);
    const transition = this.board.recordAttempt(destinationId, result, job.probe, Date.now());
    if (!transition) return;
    this.health.transition(transition, failed ? verdict.error : undefined);
    if (transition.to === 'open') this.deferQueued(destinationId, 'circuit_open');
  }

  // ——— settling ———

  /**
   * Takes a destination's queue out of turn and defers it, a few at a time between other work.
   * A job waiting for its turn holds its lane bytes until deferred; one of a partition revoked
   * meanwhile is released without a record (settle), and the next owner reads it again.
   *
   * Shedding a backlog (`backlog_full`) leaves the probes of a half-open circuit queued: at
   * most CIRCUIT_PROBES of them, and they are the only deliveries that can close it. Deferred,
   * they left the circuit half-open with its probes counted as started and none running, and
   * every later delivery was deferred `circuit_open` until a restart.
   */
  private deferQueued(destinationId: string, reason: DeferReason): void {
    const jobs = this.queue.takeQueued(destinationId, reason === 'backlog_full' ? (job) => !job.probe : undefined);
    inTurns(this.unqueued(jobs), DEFERRALS_PER_TURN, (job) => this.defer(job, reason, Date.now()));
  }

  /**
   * Jobs taken out of the queue without an attempt: a probe among them is given back to its
   * breaker at once (not when its deferral's turn comes: the circuit may have moved by then),
   * so a half-open circuit never waits for a probe that will not run.
   */
  private unqueued(jobs: Job[]): Job[] {
    for (const job of jobs) if (job.probe) this.board.cancelProbe(job.delivery.destinationId);
    return jobs;
  }

  private defer(job: Job, reason: DeferReason, now: number): void {
    const { delivery } = job;
    this.series.deferred(reason);
    this.board.noteDeferral(delivery.destinationId, reason, now);
    const probesAt = reason === 'circuit_open' ? this.board.probesAt(delivery.destinationId, now) : null;
    const settlement = deferral(delivery, reason, this.options.ladder, now, probesAt);
    if (this.options.logger.isLevelEnabled('debug')) {
      this.options.logger.debug({ deliveryId: delivery.deliveryId, destinationId: delivery.destinationId, reason, result: settlement.kind === 'dead' ? 'dead' : 'deferred' }, 'delivery deferred');
    }
    this.settle(job, { delivery, lane: job.lane, kind: 'deferred', attempt: delivery.attempts, settlement, startedAt: now, durationMs: 0, targets: [], deferReason: reason });
  }

  /** Stages the records the outcome writes in its partition's ledger, for the next transaction. */
  private settle(job: Job, facts: AttemptFacts, extra: Output[] = []): void {
    const { codec, topics, metrics, logger, limits } = this.options;
    this.release(job);
    // Revoked meanwhile: the next owner reads it again from the committed offset.
    if (!this.lanes.isCurrent(job.lane, job.ledger)) return;
    const { ledger, offset, delivery } = job;
    const records = outcomeRecords(codec, topics, limits.maxRecordBytes, facts, { topic: ledger.topic, partition: ledger.partition, offset, readAt: job.readAt }, extra);
    if (records.tooLarge) {
      metrics.quarantined.labels(ledger.topic, 'too_large').inc();
      logger.error({ deliveryId: delivery.deliveryId, destinationId: delivery.destinationId, maxRecordBytes: limits.maxRecordBytes }, 'outcome too large to write; delivery quarantined');
    } else if (records.unencodable) {
      metrics.quarantined.labels(ledger.topic, 'unencodable').inc();
      logger.error({ deliveryId: delivery.deliveryId, destinationId: delivery.destinationId }, 'outcome could not be encoded; delivery quarantined');
    }
    this.series.settle(delivery.destinationId, facts.settlement, records.result, delivery.receivedAt, records.tooLarge || records.unencodable === true);
    ledger.settle(offset, records.outputs);
    this.writer.wake();
  }

  private release(job: Job): void {
    this.lanes.release(job.lane, job.bytes);
    this.waits.changed();
  }

}
