/**
 * The Kafka edge of one retry tier: a consumer of `<ns>.retry.<tier>.v1` (its own group,
 * read_committed) that moves due records to the retry lane, `<ns>.deliveries.retries.v1`
 * (apart from first attempts, so a flood of due retries never queues in front of them).
 *
 * Each partition is read in order. The due records at its head are released — their
 * delivery produced unchanged to the retry lane (key `<destinationId>/<sourceId>/<messageId>`)
 * and the consumed offset sent in the same transaction — or, when an attempt would fall
 * outside the window, written to the dead-letter topic as `expired` in the same way, with its
 * record in the delivery log (`<ns>.attempts.v1`). A due
 * record whose destination has its circuit open at every dispatcher for a while yet is
 * deferred again instead, up the ladder (`releaseTarget`): a dispatcher would only read it to
 * do the same.
 *
 * The partitions are handled at once (kafkajs's `partitionsConsumedConcurrently`), and their
 * chunks go into shared transactions (shared `GroupCommit`). Handled one after the other, a
 * partition whose records kept coming due — a burst deferred up the ladder — kept its
 * `eachBatch` call releasing for as long as the burst lasted, and the due records of every
 * other partition of the tier waited behind it: 1,000 retries due over 5 s on two partitions
 * were released up to 5 s late. One transaction per chunk per partition also made the
 * transaction count follow the partitions rather than the traffic.
 * At the first record not yet due the partition is paused (`consumer.pause`), the
 * consumer's position is set back to that record (`seek`), and one timer per paused
 * partition resumes it at the due time. Nothing polls and nothing sleeps inside
 * `eachBatch`: while every partition is paused, kafkajs's fetch loop finds nothing to fetch
 * and keeps heartbeating.
 *
 * Due times are absolute wall-clock times in the records and every release re-checks the
 * clock, so a timer that fires early, a rebalance or a restart can only make a release
 * later, never earlier. Offsets are committed only through the transactions, so a record
 * is released exactly once to read_committed readers: after a crash, the restarted
 * process (same transactional id) fences its predecessor, whose open transaction is
 * aborted, and reads on from the last committed offset.
 *
 * kafkajs runs with `autoCommit: false` and `eachBatchAutoResolve: false`, as in the
 * router: a failed transaction is aborted and the batch fetched again from the last
 * resolved offset; when even the outcome is unknown, the committed offset is read back
 * and the partition rewound to it first.
 */
import type { EachBatchPayload, Kafka, KafkaMessage } from 'kafkajs';
import { type DeadLetter, type RetryRecord, type TopicNames } from '@tributary/schemas';
import {
  BatchFailed,
  committedPositions,
  endedWithoutRequest,
  GroupCommit,
  LogTally,
  groupByTopic,
  quarantineMessage,
  RECORD_FRAMING_BYTES,
  retryTimesProblem,
  sendInChunks,
  SupervisedConsumer,
  undecodableCause,
  formatDuration,
  parseDuration,
  TransactionOutcomeUnknown,
  type AvroCodec,
  type DeferReason,
  type Logger,
  type QuarantineCause,
  type Readiness,
  type RetryLadder,
  type TallyCounterChild,
  type TallyHistogramChild,
  type TransactionalOutput,
} from '@tributary/shared';
import type { SchedulerMetrics } from './metrics.js';
import { planPartition, releaseTarget, resumeDelay, tierFetchWaitMs, transactionChunks, verdict, type BatchEntry, type Step } from './release-plan.js';

/** Bytes of records per chunk of one partition, well under the broker's 1 MiB record-batch limit. */
const MAX_CHUNK_BYTES = 800_000;
/** Partitions handled at once; their chunks share transactions. */
const PARTITIONS_CONSUMED_CONCURRENTLY = 16;
/**
 * Bytes fetched per partition. Only a partition's head matters (it is in due order), and a
 * partition paused at its head is fetched again from there when it resumes: with the
 * pipeline's 4 MiB, every resume of a deferred burst's partition brought back thousands of
 * records that kafkajs parsed in full to release the few dozen that had come due. A fetch
 * still returns at least one whole record batch, however large.
 */
const TIER_FETCH_BYTES_PER_PARTITION = 256 * 1024;
/** Expired retries are logged as one line per destination this often (a line each at debug). */
const EXPIRED_LOG_INTERVAL_MS = 10_000;

export interface TierSchedulerOptions {
  kafka: Kafka;
  codec: AvroCodec;
  topics: TopicNames;
  tier: string;
  ladder: RetryLadder;
  output: TransactionalOutput;
  metrics: SchedulerMetrics;
  logger: Logger;
  readiness: Readiness;
  groupId: string;
  maxBatch: number;
  /** Largest record written (KAFKA_MAX_RECORD_BYTES): a larger dead letter is quarantined instead. */
  maxRecordBytes: number;
  sessionTimeoutMs: number;
  /**
   * The dispatchers' published health (shared `DestinationHealthTable`): a due record whose
   * destination has its circuit open at every dispatcher for a while yet is deferred again here
   * rather than released (`releaseTarget`). Without it, every due record is released.
   */
  health?: { circuitOpenUntil(destinationId: string, now: number): number | undefined };
}

interface Held {
  timer: NodeJS.Timeout;
  /** Write time of the record at the head, for the oldest-record gauge. */
  writtenAt: number;
}

interface Prepared {
  step: Step;
  /** A due record deferred again (its circuit open everywhere): `retry` up the ladder, `dead` expired. */
  deferred?: 'retry' | 'dead';
  /** The delivery log's record of an end (an expired dead letter), written beside it. */
  logged?: { topic: string; key: string; value: Buffer };
  topic?: string;
  key?: string;
  value?: Buffer;
  /** Why a skipped record went to the quarantine. */
  reason?: string;
  bytes: number;
}

/** What one partition hands to the group commit: its records and the offset that passes them. */
interface PartitionChunk {
  partition: number;
  prepared: Prepared[];
  nextOffset: string;
}

/** An unreadable record's quarantine message, written with the offset that skips it. */
interface Quarantined {
  topic: string;
  key: string;
  value: Buffer;
  reason: string;
}

export class TierScheduler {
  readonly topic: string;
  private consumer: SupervisedConsumer | undefined;
  /** Paused partitions and the timers that resume them. */
  private readonly held = new Map<number, Held>();
  /** Partitions whose committed position must be read back before anything else. */
  private readonly rewindNeeded = new Set<number>();
  private readonly readinessCheck: string;
  private readonly groupCommit: GroupCommit<PartitionChunk>;
  /** Longest one partition's `eachBatch` goes on releasing records that come due meanwhile. */
  private readonly sliceMs: number;
  /** The tier's delay: how far ahead a record's dueAt is waited for (release-plan `verdict`). */
  private readonly tierDelayMs: number;
  /** Expired dead letters by destination, logged every EXPIRED_LOG_INTERVAL_MS. */
  private readonly expired: LogTally;
  /** This tier's per-record series, kept: the scheduler moves thousands of records a second. */
  private readonly series: { dueLag: TallyHistogramChild; released: TallyCounterChild; deferred: TallyCounterChild; expired: TallyCounterChild; expiredHere: TallyCounterChild };

  constructor(private readonly options: TierSchedulerOptions) {
    this.topic = options.topics.retry(options.tier);
    const { metrics, tier } = options;
    this.series = { dueLag: metrics.dueLag.child(tier), released: metrics.released.child(tier), deferred: metrics.deferred.child(tier), expired: metrics.deadLetters.child('expired'), expiredHere: metrics.expired.child(tier) };
    this.expired = new LogTally({
      logger: options.logger,
      message: 'retries outside the window: dead letters written',
      context: { tier: options.tier, result: 'dead', reason: 'expired' },
      keyField: 'destinationId',
      intervalMs: EXPIRED_LOG_INTERVAL_MS,
    });
    this.readinessCheck = `tier ${options.tier}`;
    this.tierDelayMs = parseDuration(options.tier);
    this.sliceMs = tierFetchWaitMs(this.tierDelayMs);
    this.groupCommit = new GroupCommit<PartitionChunk>({
      maxRecords: options.maxBatch,
      records: (chunk) => chunk.prepared.length,
      commit: (chunks) => this.commit(chunks),
    });
  }

  /** Write times of the records held at the heads of paused partitions. */
  heldHeads(): Iterable<number> {
    return [...this.held.values()].map((held) => held.writtenAt);
  }

  async start(): Promise<void> {
    const { kafka, groupId, sessionTimeoutMs, readiness, logger } = this.options;
    this.consumer = new SupervisedConsumer({
      kafka,
      groupId,
      config: {
        sessionTimeout: sessionTimeoutMs,
        heartbeatInterval: Math.min(3_000, Math.floor(sessionTimeoutMs / 3)),
        readUncommitted: false,
        // The tier label is its delay (`10s`, `1m`, …).
        maxWaitTimeInMs: this.sliceMs,
        maxBytesPerPartition: TIER_FETCH_BYTES_PER_PARTITION,
      },
      logger,
      name: this.readinessCheck,
      readiness,
      // The new consumer reads from the committed offsets: the old holds and rewinds are moot.
      onReplace: () => {
        for (const { timer } of this.held.values()) clearTimeout(timer);
        this.held.clear();
        this.rewindNeeded.clear();
      },
      setup: async (consumer) => {
        consumer.on(consumer.events.GROUP_JOIN, ({ payload }) => {
          // A join re-reads every assigned partition from its committed offset, which is the
          // head each timer was waiting on; kafkajs keeps partitions paused across a rebalance,
          // so they are all resumed and decide again — the revoked ones are no longer fetched.
          this.releaseHolds();
          this.rewindNeeded.clear();
          logger.info({ tier: this.options.tier, assignment: payload.memberAssignment }, 'tier partitions assigned');
        });
        await consumer.subscribe({ topic: this.topic, fromBeginning: true });
        await consumer.run({
          autoCommit: false,
          eachBatchAutoResolve: false,
          partitionsConsumedConcurrently: PARTITIONS_CONSUMED_CONCURRENTLY,
          eachBatch: (payload) => this.handleBatch(payload),
        });
      },
    });
    this.expired.start();
    await this.consumer.start();
  }

  async stop(): Promise<void> {
    for (const { timer } of this.held.values()) clearTimeout(timer);
    this.held.clear();
    await this.consumer?.stop();
    this.consumer = undefined;
    this.expired.stop();
  }

  private releaseHolds(): void {
    const partitions = [...this.held.keys()];
    for (const { timer } of this.held.values()) clearTimeout(timer);
    this.held.clear();
    if (partitions.length > 0) this.consumer?.resume([{ topic: this.topic, partitions }]);
  }

  private async handleBatch({ batch, resolveOffset, heartbeat, isRunning, isStale }: EachBatchPayload): Promise<void> {
    const { partition, messages } = batch;
    const { topic } = this;
    if (this.rewindNeeded.has(partition)) {
      await this.retriable(partition, () => this.rewind(partition));
      return;
    }
    // Records no one can read go to the quarantine in the transaction that skips them.
    const quarantined = new Map<string, Quarantined>();
    // A tier partition is in due order, so only its head matters: records are decoded up to the
    // first one not due yet, and the rest of the batch is left for when that one is. (Decoding
    // the whole fetched batch at every wake-up — thousands of records to release a few dozen,
    // then seeking back and fetching them again — made the scheduler the busiest process of the
    // pipeline when a burst was deferred up the ladder.)
    let decodedUpTo = 0;
    const decodeMore = async (): Promise<Array<BatchEntry & { writtenAt: number }>> => {
      const decoded: Array<BatchEntry & { writtenAt: number }> = [];
      while (decodedUpTo < messages.length) {
        const message = messages[decodedUpTo++]!;
        const { record, quarantine } = await this.decode(message, partition);
        if (quarantine) quarantined.set(message.offset, quarantine);
        decoded.push({ offset: message.offset, record, writtenAt: Number(message.timestamp) });
        if (record && verdict(record, this.options.ladder, Date.now(), this.tierDelayMs).kind === 'wait') break;
      }
      return decoded;
    };

    // Records that come due while a transaction commits are released by the next one at
    // once, rather than after a pause, a timer and a fetch: under load this keeps the due
    // lag near one transaction's duration. But only for a slice: kafkajs fetches again for
    // the tier's other partitions only once every batch of the last fetch is handled, so a
    // partition whose records keep coming due (a deferred burst) would hold theirs back for
    // as long as it lasts. The slice is the tier's fetch wait, the lateness already accepted.
    const sliceEndsAt = Date.now() + this.sliceMs;
    let remaining = await decodeMore();
    for (;;) {
      const plan = planPartition(remaining, this.options.ladder, Date.now(), this.tierDelayMs);
      const wholeBatch = decodedUpTo === messages.length;
      const chunks = transactionChunks(plan.steps.map((step) => this.prepare(step, partition, quarantined)), this.options.maxBatch, MAX_CHUNK_BYTES);
      for (const [index, chunk] of chunks.entries()) {
        if (!isRunning() || isStale()) return;
        const last = chunk[chunk.length - 1]!.step;
        // With nothing held back and the whole batch read, the commit goes past the batch's
        // last offset, which may be a transaction marker after the last record.
        const lastOffset = index === chunks.length - 1 && !plan.hold && wholeBatch ? batch.lastOffset() : last.offset;
        await this.retriable(partition, async () => {
          try {
            await this.groupCommit.submit({ partition, prepared: chunk, nextOffset: (BigInt(lastOffset) + 1n).toString() });
          } catch (error) {
            if (error instanceof TransactionOutcomeUnknown) {
              this.rewindNeeded.add(partition);
              await this.rewind(partition).catch((rewindError: unknown) =>
                this.options.logger.error({ err: rewindError, topic, partition }, 'rewind failed; retrying before the next batch'),
              );
            }
            throw error;
          }
        });
        resolveOffset(last.offset);
        // Left unwrapped: kafkajs must see a rebalance error as such to rejoin the group.
        await heartbeat();
      }
      const { hold } = plan;
      const sliceOver = Date.now() >= sliceEndsAt;
      if (!hold) {
        // Past the slice, the rest of the batch is fetched again from the last resolved offset.
        if (wholeBatch || sliceOver) return;
        // Everything read so far went out (the head came due meanwhile): read on.
        if (!isRunning() || isStale()) return;
        remaining = await decodeMore();
        continue;
      }
      const headIndex = remaining.findIndex((entry) => entry.offset === hold.offset);
      if (plan.steps.length > 0 && !sliceOver) {
        remaining = remaining.slice(headIndex);
        continue;
      }
      // Past the slice the head may be due already: the hold then resumes at once.
      if (isRunning() && !isStale()) this.hold(partition, hold.offset, hold.until, remaining[headIndex]!.writtenAt);
      return;
    }
  }

  private hold(partition: number, offset: string, until: number, writtenAt: number): void {
    const consumer = this.consumer;
    if (!consumer) return;
    const { topic } = this;
    // Not paused (a consumer being restarted): its successor reads from the committed offset, the head.
    if (!consumer.pause([{ topic, partitions: [partition] }])) return;
    consumer.seek({ topic, partition, offset });
    clearTimeout(this.held.get(partition)?.timer);
    const timer = setTimeout(() => {
      this.held.delete(partition);
      this.consumer?.resume([{ topic, partitions: [partition] }]);
    }, resumeDelay(until, Date.now()));
    this.held.set(partition, { timer, writtenAt });
  }

  /**
   * What a step writes. A dead letter is its delivery and an error that quotes the last one, so
   * it can be larger than the retry record it ends: one the broker would refuse for its size
   * would fail the group commit, and with it every partition's chunk, at every try. The retry
   * record goes to the quarantine instead (`too_large`), as the dispatcher does with an outcome.
   */
  private prepare(step: Step, partition: number, quarantined: ReadonlyMap<string, Quarantined>): Prepared {
    const prepared = this.prepareWrites(step, quarantined);
    if (step.kind === 'skip') return prepared;
    const limit = this.options.maxRecordBytes - RECORD_FRAMING_BYTES;
    const largest = Math.max(prepared.value?.length ?? 0, prepared.logged?.value.length ?? 0);
    if (largest <= limit) return prepared;
    const { codec, topics, logger, tier } = this.options;
    const { delivery } = step.record;
    const now = Date.now();
    const poison = { topic: this.topic, partition, offset: step.offset, key: Buffer.from(delivery.deliveryId), value: codec.encode(this.topic, step.record), timestamp: String(now) };
    const cause = { reason: 'too_large', error: `what this retry writes (${prepared.topic ?? 'its record'}) would be ${largest} bytes, over ${limit} (KAFKA_MAX_RECORD_BYTES); the retry record was set aside` } as const;
    logger.error({ tier, deliveryId: delivery.deliveryId, destinationId: delivery.destinationId, offset: step.offset, bytes: largest, limit }, 'record too large to write; retry record quarantined');
    const { topic, message } = quarantineMessage(codec, topics, 'retry-scheduler', poison, cause, now);
    const key = String(message.key);
    const value = message.value as Buffer;
    return { step: { kind: 'skip', offset: step.offset }, topic, key, value, reason: cause.reason, bytes: key.length + value.length };
  }

  private prepareWrites(step: Step, quarantined: ReadonlyMap<string, Quarantined>): Prepared {
    const { codec, topics } = this.options;
    if (step.kind === 'skip') {
      const poison = quarantined.get(step.offset);
      return poison ? { step, topic: poison.topic, key: poison.key, value: poison.value, reason: poison.reason, bytes: poison.key.length + poison.value.length } : { step, bytes: 0 };
    }
    const { delivery } = step.record;
    // The delivery's own id, whichever form it was made in (deliveryKey).
    const key = delivery.deliveryId;
    const now = Date.now();
    if (step.kind === 'release') {
      const target = releaseTarget(step.record, this.options.health?.circuitOpenUntil(delivery.destinationId, now), this.options.ladder, now);
      if (target.kind === 'defer') {
        const { deferral } = target;
        if (deferral.kind === 'dead') return { ...this.ending(step, key, deferral.letter, 'circuit_open', now), deferred: 'dead' };
        const topic = topics.retry(deferral.record.tier);
        const value = codec.encode(topic, deferral.record);
        return { step, deferred: 'retry', topic, key, value, bytes: key.length + value.length };
      }
      const value = codec.encode(topics.dueRetries, delivery);
      return { step, topic: topics.dueRetries, key, value, bytes: key.length + value.length };
    }
    return this.ending(step, key, this.expiredLetter(step.record, step.deadline), null, now);
  }

  /** A dead letter, and its record in the delivery log: every end is logged, whoever decides it. */
  private ending(step: Step, key: string, letter: DeadLetter, deferReason: DeferReason | null, now: number): Prepared {
    const { codec, topics } = this.options;
    const value = codec.encode(topics.deadLetters, letter);
    const logValue = codec.encode(topics.attempts, endedWithoutRequest(letter, deferReason, now));
    const logged = { topic: topics.attempts, key: letter.delivery.deliveryId, value: logValue };
    return { step, topic: topics.deadLetters, key, value, logged, bytes: key.length + value.length + logged.key.length + logValue.length };
  }

  private expiredLetter(record: RetryRecord, deadline: number): DeadLetter {
    const { delivery } = record;
    const window = formatDuration(this.options.ladder.windowMs);
    const error =
      `retry due ${new Date(record.dueAt).toISOString()} would be attempted after the ${window} window from the first attempt ` +
      `(ended ${new Date(deadline).toISOString()}); last error: ${delivery.lastError ?? 'none'}`;
    return { delivery, reason: 'expired', status: delivery.lastStatus, error, deadAt: Date.now() };
  }

  /** One transaction for the chunks of every partition that has one ready. */
  private async commit(chunks: PartitionChunk[]): Promise<void> {
    const { output, metrics, logger, groupId, tier } = this.options;
    const records: Array<{ topic: string; key: string | undefined; value: Buffer }> = [];
    const offsets = new Map<number, string>();
    for (const { partition, prepared, nextOffset } of chunks) {
      for (const { topic, key, value, logged } of prepared) {
        if (topic && value) records.push({ topic, key, value });
        if (logged) records.push(logged);
      }
      const before = offsets.get(partition);
      if (before === undefined || BigInt(nextOffset) > BigInt(before)) offsets.set(partition, nextOffset);
    }
    try {
      await output.run(async (transaction) => {
        if (records.length > 0) await sendInChunks(transaction, groupByTopic(records));
        const partitions = [...offsets].map(([partition, offset]) => ({ partition, offset }));
        await transaction.sendOffsets({ consumerGroupId: groupId, topics: [{ topic: this.topic, partitions }] });
      });
    } catch (error) {
      metrics.transactionFailures.inc({ tier });
      const handled = chunks.reduce((sum, chunk) => sum + chunk.prepared.length, 0);
      logger.error({ err: error, tier, partitions: [...offsets.keys()], records: handled }, 'release transaction failed; the records will be handled again');
      throw error;
    }
    const committedAt = Date.now();
    for (const { partition, prepared, nextOffset } of chunks) {
      for (const { step, reason, deferred } of prepared) {
        if (step.kind === 'skip' && reason !== undefined) {
          if (reason !== 'too_large') metrics.unreadable.inc({ tier });
          metrics.quarantined.inc({ topic: this.topic, reason });
        } else if (step.kind === 'release') {
          this.series.dueLag.observe(Math.max(0, committedAt - step.record.dueAt) / 1000);
          if (deferred === undefined) this.series.released.inc();
          else this.series.deferred.inc();
          if (deferred === 'dead') {
            this.series.expired.inc();
            this.series.expiredHere.inc();
            this.expired.count(step.record.delivery.destinationId);
          }
        } else if (step.kind === 'expire') {
          this.series.expired.inc();
          this.series.expiredHere.inc();
          const { delivery } = step.record;
          this.expired.count(delivery.destinationId);
          logger.debug(
            { tier, deliveryId: delivery.deliveryId, messageId: delivery.messageId, destinationId: delivery.destinationId, attempts: delivery.attempts, result: 'dead', reason: 'expired' },
            'retry outside the window; dead letter written',
          );
        }
      }
      const released = prepared.filter(({ step, deferred }) => step.kind === 'release' && deferred === undefined).length;
      if (released > 0) logger.debug({ tier, partition, released, nextOffset }, 'retries released');
    }
  }

  /**
   * A record that can never be read (not framed, an unknown schema, truncated Avro), or that
   * carries a time no date holds (shared `retryTimesProblem`), is logged, counted and
   * quarantined; one that may read later (the registry unreachable)
   * fails the batch, which kafkajs fetches again.
   */
  private async decode(message: KafkaMessage, partition: number): Promise<{ record?: RetryRecord; quarantine?: Quarantined }> {
    const { codec, topics, logger, tier } = this.options;
    const { value, offset } = message;
    let cause: QuarantineCause | undefined;
    try {
      const record = await codec.decode<RetryRecord>('retry', value);
      const badTime = retryTimesProblem(record);
      if (badTime === undefined) return { record };
      cause = { reason: 'invalid_timestamp', error: badTime };
      logger.error({ tier, partition, offset, reason: cause.reason, error: badTime }, 'retry record with an impossible time quarantined');
    } catch (error) {
      cause = undecodableCause(error);
      if (!cause) throw new BatchFailed('releasing', this.topic, partition, error);
      logger.error({ err: error, tier, partition, offset, reason: cause.reason }, 'unreadable retry record quarantined');
    }
    const poison = { topic: this.topic, partition, offset, key: message.key, value, timestamp: message.timestamp };
    const { topic, message: record } = quarantineMessage(codec, topics, 'retry-scheduler', poison, cause, Date.now());
    return { quarantine: { topic, key: String(record.key), value: record.value as Buffer, reason: cause.reason } };
  }

  /** Runs a step of handling a batch; its failure makes kafkajs fetch the batch again. */
  private async retriable(partition: number, step: () => Promise<void>): Promise<void> {
    try {
      await step();
    } catch (error) {
      throw error instanceof BatchFailed ? error : new BatchFailed('releasing', this.topic, partition, error);
    }
  }

  /** Moves the partition back to the offset the group committed (or the start, if none). */
  private async rewind(partition: number): Promise<void> {
    const { kafka, groupId, logger, output } = this.options;
    const { topic } = this;
    // Only once a producer with our id is registered again is the transaction of unknown
    // outcome finished, and the committed offset final.
    await output.ensureRegistered();
    const offset = (await committedPositions(kafka, groupId, topic, [partition])).get(partition) ?? '0';
    const moved = this.consumer?.seek({ topic, partition, offset }) ?? false;
    this.rewindNeeded.delete(partition);
    // Not moved: the consumer is being restarted, and its successor reads from that offset anyway.
    if (moved) logger.warn({ topic, partition, offset }, 'partition rewound to its committed offset');
  }
}
