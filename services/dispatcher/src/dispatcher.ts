/**
 * The Kafka side of delivery: reads `Delivery` records, hands them to the scheduler,
 * attempts them over HTTP, writes retry records and dead letters, and commits offsets.
 *
 * - Deliveries of a partition are processed concurrently; the scheduler bounds the
 *   attempts running globally and per destination and decides when a stalled
 *   destination's deliveries are deferred instead of queued (see scheduler.ts).
 * - Fetching waits only while the buffer (deliveries read and not yet settled) is full.
 * - A delivery is settled once its outcome is durable: delivered, or its retry record or
 *   dead letter acknowledged by Kafka. Offsets are committed per partition up to the
 *   lowest unsettled delivery (offsets.ts), every COMMIT_INTERVAL_MS and at shutdown.
 * - Rebalance: partitions no longer assigned are dropped — their queued deliveries are
 *   abandoned (the next owner reads them again from the committed offset), attempts
 *   already running finish but are never committed here. A partition kept across a
 *   rebalance is re-fetched from its committed offset; records this process already read
 *   are skipped, so nothing is attempted twice.
 * - Shutdown: stop fetching, abandon queued deliveries, let running attempts finish and
 *   their outcomes be written (bounded by the drain timeout), commit, disconnect.
 */
import { setImmediate as nextTurn } from 'node:timers/promises';
import type { Consumer, EachBatchPayload, Kafka, Producer } from 'kafkajs';
import { createConsumer, createProducer, type AvroCodec, type ConfigView, type Logger, type RetryLadder } from '@tributary/shared';
import { deliveryKey, type Delivery, type TopicNames } from '@tributary/schemas';
import { classifyDelivery, classifyResult, requestOutcome, statusClass, urlLabel, type TargetVerdict } from './classify.js';
import type { ConfigFreshness } from './config-freshness.js';
import type { DispatcherMetrics } from './metrics.js';
import { afterAttempt, deferral, preflight, type Settlement } from './next-step.js';
import { settleOnFirstSuccess } from './first-success.js';
import { PartitionProgress } from './offsets.js';
import { RecordWriter } from './record-writer.js';
import { buildRequest } from './request.js';
import { DestinationScheduler, type SchedulerLimits, type Started } from './scheduler.js';
import type { WebhookClient } from './webhook-client.js';

const COMMIT_INTERVAL_MS = 200;
/** How often a fetch waiting for room re-checks time-based conditions and heartbeats. */
const WAIT_TICK_MS = 100;
/**
 * Longest stretch of batch processing without yielding to the event loop. Decoding is
 * synchronous once the schema is cached, so a large batch would otherwise hold back the
 * HTTP responses of running attempts — inflating their durations, which the scheduler
 * reads to judge whether a destination is stalled.
 */
const MAX_SLICE_MS = 5;
/**
 * The event loop is probed every LOOP_PROBE_MS; a probe later than LOOP_GAP_MS means the
 * loop was blocked, and silence of destinations during that time is not held against them.
 */
const LOOP_PROBE_MS = 20;
const LOOP_GAP_MS = 100;
/** kafkajs hands batches of this many partitions to `eachBatch` at once. */
const PARTITIONS_CONSUMED_CONCURRENTLY = 8;

export interface DispatcherOptions {
  kafka: Kafka;
  codec: AvroCodec;
  topics: TopicNames;
  config: ConfigView;
  freshness: ConfigFreshness;
  client: WebhookClient;
  logger: Logger;
  metrics: DispatcherMetrics;
  ladder: RetryLadder;
  limits: SchedulerLimits & { maxBuffered: number };
  groupId: string;
  /** Called when an outcome cannot be recorded at all; the process should stop (its offset stays uncommitted). */
  onFatal(error: unknown): void;
}

interface Job {
  delivery: Delivery;
  progress: PartitionProgress;
  offset: bigint;
  /** When this process read the record: a config check started after it covers it. */
  readAt: number;
}

interface Attempt {
  settlement: Settlement;
  attempt: number;
  results: TargetVerdict[];
  durationMs: number;
  /** Put back without a request because the destination is stalled. */
  deferred?: boolean;
}

export class Dispatcher {
  private readonly consumer: Consumer;
  private readonly producer: Producer;
  private readonly writer: RecordWriter;
  private readonly scheduler: DestinationScheduler<Job>;
  private readonly progress = new Map<number, PartitionProgress>();
  private listeners = new Set<() => void>();
  private buffered = 0;
  private stopping = false;
  private commitTimer: NodeJS.Timeout | undefined;
  private loopProbe: NodeJS.Timeout | undefined;
  private lastProbeAt = Date.now();
  private committing: Promise<void> | undefined;

  constructor(private readonly options: DispatcherOptions) {
    this.consumer = createConsumer(options.kafka, options.groupId);
    this.producer = createProducer(options.kafka);
    this.writer = new RecordWriter(this.producer, options.logger);
    this.scheduler = new DestinationScheduler<Job>(options.limits);
  }

  async start(): Promise<void> {
    const { topics, logger } = this.options;
    await this.producer.connect();
    await this.consumer.connect();
    this.consumer.on(this.consumer.events.GROUP_JOIN, ({ payload }) => {
      this.onAssignment(payload.memberAssignment[topics.deliveries] ?? []);
    });
    // Kafka still accepts commits of the old generation while a rebalance is being prepared.
    this.consumer.on(this.consumer.events.REBALANCING, () => void this.commit());
    this.consumer.on(this.consumer.events.CRASH, ({ payload }) => {
      logger.error({ err: payload.error, restart: payload.restart }, 'deliveries consumer crashed');
      if (!payload.restart) this.fail(payload.error);
    });
    // A new group starts at the beginning: deliveries written before the first start are still due.
    await this.consumer.subscribe({ topic: topics.deliveries, fromBeginning: true });
    await this.consumer.run({
      autoCommit: false,
      eachBatchAutoResolve: false,
      partitionsConsumedConcurrently: PARTITIONS_CONSUMED_CONCURRENTLY,
      eachBatch: (payload) => this.onBatch(payload),
    });
    this.commitTimer = setInterval(() => void this.commit(), COMMIT_INTERVAL_MS);
    this.loopProbe = setInterval(() => this.probeLoop(), LOOP_PROBE_MS);
    this.loopProbe.unref();
  }

  /** Tells the scheduler when the event loop was blocked (see LOOP_GAP_MS). */
  private probeLoop(): void {
    const now = Date.now();
    if (now - this.lastProbeAt > LOOP_GAP_MS) this.scheduler.noteUnresponsiveUntil(now);
    this.lastProbeAt = now;
  }

  async stop(drainTimeoutMs: number): Promise<void> {
    const { logger, topics } = this.options;
    this.stopping = true;
    clearInterval(this.commitTimer);
    clearInterval(this.loopProbe);
    this.consumer.pause([{ topic: topics.deliveries }]);
    const abandoned = this.scheduler.removeQueued(() => true);
    this.release(abandoned.length);
    const drained = await this.drained(drainTimeoutMs);
    if (!drained) logger.warn({ unsettled: this.buffered }, 'shutdown: deliveries still unsettled at the drain timeout; they will be read again');
    await this.committing;
    await this.commit();
    await this.consumer.disconnect();
    this.writer.close();
    await this.producer.disconnect();
    logger.info({ abandonedQueued: abandoned.length }, 'dispatcher stopped');
  }

  private async onBatch({ batch, resolveOffset, heartbeat, isRunning, isStale }: EachBatchPayload): Promise<void> {
    const { partition } = batch;
    const first = batch.messages[0];
    if (!first) return;
    let progress = this.progress.get(partition);
    if (!progress) {
      progress = new PartitionProgress(partition, BigInt(first.offset));
      this.progress.set(partition, progress);
    }
    const stillOwned = () => !this.stopping && isRunning() && !isStale() && this.progress.get(partition) === progress;
    let sliceStart = performance.now();
    for (const message of batch.messages) {
      if (performance.now() - sliceStart > MAX_SLICE_MS) {
        await nextTurn();
        sliceStart = performance.now();
      }
      if (!stillOwned()) return;
      const offset = BigInt(message.offset);
      if (progress.hasRead(offset)) {
        resolveOffset(message.offset);
        continue;
      }
      if (!(await this.waitForBuffer(stillOwned, heartbeat))) return;
      const delivery = await this.decode(message.value, partition, message.offset);
      // Shutdown or a revocation may have begun during the decode.
      if (!stillOwned()) return;
      if (!delivery) {
        progress.read(offset);
        progress.settle(offset);
        resolveOffset(message.offset);
        continue;
      }
      progress.read(offset);
      this.buffered++;
      this.options.metrics.buffered.set(this.buffered);
      const job: Job = { delivery, progress, offset, readAt: Date.now() };
      // The probe may not have run yet after a block that just ended.
      if (job.readAt - this.lastProbeAt > LOOP_GAP_MS) this.scheduler.noteUnresponsiveUntil(job.readAt);
      if (this.scheduler.admission(delivery.destinationId, job.readAt) === 'defer') {
        for (const deferred of [job, ...this.scheduler.trimExcess(delivery.destinationId)]) {
          this.defer(deferred).catch((error: unknown) => this.fail(error));
        }
      } else {
        this.scheduler.enqueue(delivery.destinationId, job);
        this.pump();
      }
      resolveOffset(message.offset);
    }
    // Transaction markers after the last record move the commit point too.
    progress.readUpTo(BigInt(batch.lastOffset()));
  }

  /** Decodes a record; undefined (logged, counted, skipped) when it cannot be a Delivery. */
  private async decode(value: Buffer | null, partition: number, offset: string): Promise<Delivery | undefined> {
    const { codec, logger, metrics } = this.options;
    try {
      if (!value || value.length === 0) throw new Error('empty record value');
      return await codec.decode<Delivery>('delivery', value);
    } catch (error) {
      // A record without Avro framing can never become a Delivery; anything else (the
      // registry unreachable, for instance) may pass on a later try, so the batch fails
      // and kafkajs fetches it again.
      if (value && value.length > 0 && !(error instanceof Error && /Confluent-framed/.test(error.message))) throw error;
      metrics.unreadable.inc();
      logger.error({ err: error, partition, offset }, 'unreadable delivery record skipped');
      return undefined;
    }
  }

  private async waitForBuffer(stillOwned: () => boolean, heartbeat: () => Promise<void>): Promise<boolean> {
    while (this.buffered >= this.options.limits.maxBuffered) {
      if (!stillOwned()) return false;
      await this.changed(WAIT_TICK_MS);
      await heartbeat();
    }
    return stillOwned();
  }

  private pump(): void {
    for (const started of this.scheduler.startRunnable(Date.now())) {
      this.run(started).catch((error: unknown) => this.fail(error));
    }
    this.options.metrics.inFlight.set(this.scheduler.inFlight);
  }

  private async run(started: Started<Job>): Promise<void> {
    const job = started.item;
    let attempt: Attempt;
    try {
      attempt = await this.attempt(job);
    } finally {
      this.scheduler.finish(started, Date.now());
      this.pump();
      this.notify();
    }
    await this.record(job, attempt);
  }

  private async attempt(job: Job): Promise<Attempt> {
    const { config, freshness, ladder, client, metrics } = this.options;
    const { delivery } = job;
    let destination = config.destination(delivery.destinationId);
    if (!destination?.enabled) {
      await freshness.caughtUpSince(job.readAt);
      destination = config.destination(delivery.destinationId);
    }
    const attemptAt = Date.now();
    const attemptNumber = delivery.attempts + 1;
    const check = preflight(delivery, destination, ladder, attemptAt);
    if (check.kind === 'dead') return { settlement: check, attempt: attemptNumber, results: [], durationMs: 0 };

    const { settings } = check.destination;
    const results = await settleOnFirstSuccess(
      settings.webhooks.map(async (entry, index): Promise<TargetVerdict> => {
        const request = buildRequest(delivery, settings, entry, attemptAt);
        const startedAt = performance.now();
        const verdict = classifyResult(await client.post(delivery.destinationId, entry.url, request));
        metrics.requestDuration.labels(requestOutcome(verdict)).observe((performance.now() - startedAt) / 1000);
        metrics.attempts.labels(verdict.class, statusClass(verdict.status)).inc();
        return { target: urlLabel(entry.url, index), verdict };
      }),
      ({ verdict }) => verdict.class === 'success',
    );
    const now = Date.now();
    const settlement = afterAttempt(delivery, classifyDelivery(results), ladder, attemptAt, now);
    return { settlement, attempt: attemptNumber, results, durationMs: now - attemptAt };
  }

  /** Makes the outcome durable, logs it, and settles the job. */
  private async record(job: Job, { settlement, attempt, results, durationMs, deferred = false }: Attempt): Promise<void> {
    const { codec, topics, metrics, logger } = this.options;
    const { delivery } = job;
    const key = deliveryKey(delivery.destinationId, delivery.messageId);
    const context = {
      messageId: delivery.messageId,
      deliveryId: delivery.deliveryId,
      destinationId: delivery.destinationId,
      attempt,
      durationMs,
      urls: results.map(({ target, verdict }) => ({ target, outcome: requestOutcome(verdict), status: verdict.status })),
    };
    switch (settlement.kind) {
      case 'delivered':
        metrics.deliveryLatency.observe(Math.max(0, Date.now() - delivery.receivedAt) / 1000);
        metrics.settled.labels('delivered').inc();
        logger.info({ ...context, result: 'delivered', statusClass: statusClass(settlement.status) }, 'delivered');
        break;
      case 'retry': {
        const { record } = settlement;
        const topic = topics.retry(record.tier);
        await this.writer.write(topic, key, codec.encode(topic, record));
        if (deferred) metrics.settled.labels('deferred').inc();
        else {
          metrics.retriesScheduled.labels(record.tier).inc();
          metrics.settled.labels('retry').inc();
        }
        logger.info(
          {
            ...context,
            result: deferred ? 'deferred' : 'retry',
            statusClass: statusClass(record.delivery.lastStatus),
            tier: record.tier,
            dueAt: new Date(record.dueAt).toISOString(),
            reason: record.delivery.lastError,
          },
          deferred ? 'delivery deferred: destination saturated' : 'delivery failed; retry scheduled',
        );
        break;
      }
      case 'dead': {
        const { letter } = settlement;
        await this.writer.write(topics.deadLetters, key, codec.encode(topics.deadLetters, letter));
        metrics.deadLetters.labels(letter.reason).inc();
        metrics.settled.labels('dead').inc();
        logger.info(
          { ...context, result: 'dead', statusClass: statusClass(letter.status), reason: letter.reason, error: letter.error },
          'delivery dead-lettered',
        );
        break;
      }
    }
    if (logger.isLevelEnabled('debug')) logger.debug({ deliveryId: delivery.deliveryId, body: delivery.body.toString('utf8') }, 'delivery body');
    this.settle(job);
  }

  private async defer(job: Job): Promise<void> {
    const { ladder, metrics } = this.options;
    metrics.deferred.inc();
    await this.record(job, {
      settlement: deferral(job.delivery, ladder, Date.now()),
      attempt: job.delivery.attempts,
      results: [],
      durationMs: 0,
      deferred: true,
    });
  }

  /** An outcome could not be recorded: stop the process, unless it is stopping already. */
  private fail(error: unknown): void {
    if (this.stopping) this.options.logger.warn({ err: error }, 'an outcome was not recorded before shutdown; its delivery will be read again');
    else this.options.onFatal(error);
  }

  private settle(job: Job): void {
    job.progress.settle(job.offset);
    this.release(1);
  }

  private release(count: number): void {
    if (count === 0) return;
    this.buffered -= count;
    this.options.metrics.buffered.set(this.buffered);
    this.notify();
  }

  private onAssignment(partitions: number[]): void {
    const assigned = new Set(partitions);
    for (const [partition, progress] of this.progress) {
      if (assigned.has(partition)) continue;
      this.progress.delete(partition);
      const abandoned = this.scheduler.removeQueued((job) => job.progress === progress);
      this.release(abandoned.length);
      this.options.logger.info(
        { partition, abandonedQueued: abandoned.length, stillRunning: progress.unsettled - abandoned.length },
        'partition revoked; its queued deliveries are left to the next owner',
      );
    }
  }

  private async commit(): Promise<void> {
    if (this.committing) return this.committing;
    const { topics, logger } = this.options;
    const pending: Array<{ progress: PartitionProgress; point: bigint }> = [];
    for (const progress of this.progress.values()) {
      const point = progress.uncommitted();
      if (point !== undefined) pending.push({ progress, point });
    }
    if (pending.length === 0) return;
    this.committing = (async () => {
      try {
        await this.consumer.commitOffsets(
          pending.map(({ progress, point }) => ({ topic: topics.deliveries, partition: progress.partition, offset: point.toString() })),
        );
        for (const { progress, point } of pending) progress.markCommitted(point);
      } catch (error) {
        logger.warn({ err: error }, 'offset commit failed; the next one carries the same offsets');
      } finally {
        this.committing = undefined;
      }
    })();
    return this.committing;
  }

  /** Resolves on the next settlement or finished attempt, or after `timeoutMs`. */
  private changed(timeoutMs: number): Promise<void> {
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

  private notify(): void {
    const listeners = this.listeners;
    this.listeners = new Set();
    for (const listener of listeners) listener();
  }

  private async drained(timeoutMs: number): Promise<boolean> {
    const deadline = Date.now() + timeoutMs;
    while (this.buffered > 0) {
      const left = deadline - Date.now();
      if (left <= 0) return false;
      await this.changed(Math.min(left, WAIT_TICK_MS));
    }
    return true;
  }
}
