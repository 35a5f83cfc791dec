/**
 * The Kafka edge of the indexer: consumes `<ns>.attempts.v1` and `<ns>.ingest.v1`
 * (read_committed) and, for each fetched batch, in chunks of at most INDEXER_MAX_BATCH
 * records and INDEXER_MAX_BATCH_BYTES bytes: decodes, maps to rows, writes them in one
 * database transaction, then commits the consumed offset — in a Kafka transaction with the
 * quarantine records of the chunk's poison, so a poison record is set aside exactly when
 * the offset that skips it is committed.
 *
 * At-least-once plus idempotent writes: a chunk whose offset was not committed is indexed
 * again, and writes nothing new (see store/write.ts). Nothing is skipped: a chunk that fails
 * for any reason but its own records — the database down or slow, the registry or broker
 * away — is retried, with backoff, for as long as it takes, inside the batch handler: the
 * consumer keeps heartbeating (so keeps its partitions), /readyz says 503 meanwhile, and the
 * process never exits for it. A rebalance or shutdown ends the wait; kafkajs then fetches
 * from the last committed offset.
 *
 * A record the database refuses for its data (SQLSTATE classes 22, 23, 54) would fail its
 * chunk forever: the chunk is written again one record at a time, and the refused one is
 * quarantined as `unwritable`.
 */
import type { EachBatchPayload, Kafka, KafkaMessage, Message } from 'kafkajs';
import type { DeliveryAttempt, IngestMessage, TopicNames } from '@tributary/schemas';
import { quarantineMessage, SupervisedConsumer, undecodableCause, type AvroCodec, type Logger, type QuarantineCause, type Readiness, type TransactionalOutput } from '@tributary/shared';
import { chunkRecords } from './chunks.js';
import type { IndexerMetrics } from './metrics.js';
import { mapAttempts, mapMessages, poisonRecords, rowCount, rowsOf, type Decoded, type Mapped, type RawRecord } from './plan.js';
import type { RoutingConfig } from './rows.js';
import { classifySqlError } from './sql/client.js';
import type { DeliveryLogStore } from './store/store.js';
import type { WriteCounts } from './store/write.js';

export interface IndexerConsumerOptions {
  kafka: Kafka;
  codec: AvroCodec;
  topics: TopicNames;
  config: RoutingConfig;
  store: DeliveryLogStore;
  output: TransactionalOutput;
  metrics: IndexerMetrics;
  logger: Logger;
  readiness: Readiness;
  groupId: string;
  maxBatch: number;
  maxBatchBytes: number;
  sessionTimeoutMs: number;
  /** Longest wait between two tries of a failing chunk. */
  maxBackoffMs?: number;
}

/** A write the database refused for a reason other than the data: retried, never skipped. */
class DatabaseUnavailable extends Error {
  constructor(override readonly cause: unknown) {
    super(`the delivery log's database failed: ${cause instanceof Error ? cause.message : String(cause)}`);
    this.name = 'DatabaseUnavailable';
  }
}

/** The handler gave up waiting because the partition is no longer ours, or we are stopping. */
class Interrupted extends Error {
  constructor(override readonly cause: unknown) {
    super(`indexing interrupted: ${cause instanceof Error ? cause.message : String(cause)}`);
    this.name = 'Interrupted';
  }
}

const SERVICE = 'indexer';

export class IndexerConsumer {
  private consumer: SupervisedConsumer | undefined;

  constructor(private readonly options: IndexerConsumerOptions) {}

  async start(): Promise<void> {
    const { kafka, topics, groupId, logger, readiness, sessionTimeoutMs } = this.options;
    this.consumer = new SupervisedConsumer({
      kafka,
      groupId,
      // Fetches bounded in bytes: a backlog is read in pieces, not into memory at once.
      config: {
        readUncommitted: false,
        sessionTimeout: sessionTimeoutMs,
        heartbeatInterval: Math.min(3_000, Math.floor(sessionTimeoutMs / 3)),
        maxBytes: 16 * 1024 * 1024,
        maxBytesPerPartition: 4 * 1024 * 1024,
      },
      logger,
      name: 'consumer',
      readiness,
      setup: async (consumer) => {
        consumer.on(consumer.events.GROUP_JOIN, ({ payload }) => logger.info({ assignment: payload.memberAssignment }, 'partitions assigned'));
        // A new group starts at the beginning: what was written before the first indexer ran is indexed too.
        await consumer.subscribe({ topics: [topics.attempts, topics.ingest], fromBeginning: true });
        await consumer.run({ autoCommit: false, eachBatchAutoResolve: false, eachBatch: (payload) => this.handleBatch(payload) });
      },
    });
    await this.consumer.start();
  }

  async stop(): Promise<void> {
    await this.consumer?.stop();
    this.consumer = undefined;
  }

  private async handleBatch({ batch, resolveOffset, heartbeat, isRunning, isStale }: EachBatchPayload): Promise<void> {
    const { topic, partition, messages } = batch;
    const chunks = chunkRecords(messages, this.options.maxBatch, this.options.maxBatchBytes);
    for (const [index, chunk] of chunks.entries()) {
      if (!isRunning() || isStale()) return;
      const last = chunk[chunk.length - 1]!;
      // The batch's last offset may be a transaction marker after the last record; committing
      // past it spares the next fetch an empty answer.
      const lastOffset = index === chunks.length - 1 ? batch.lastOffset() : last.offset;
      const nextOffset = (BigInt(lastOffset) + 1n).toString();
      await this.untilDone(topic, partition, () => this.indexChunk(topic, partition, chunk, nextOffset), { heartbeat, isRunning, isStale });
      resolveOffset(last.offset);
      await heartbeat();
    }
  }

  /**
   * Runs `step` until it succeeds, backing off (up to maxBackoffMs) and heartbeating while it
   * waits. Throws only when the wait is interrupted: the consumer stopping, the batch gone
   * stale, or a heartbeat failing (a rebalance: kafkajs must see that error to rejoin).
   */
  private async untilDone(
    topic: string,
    partition: number,
    step: () => Promise<void>,
    { heartbeat, isRunning, isStale }: Pick<EachBatchPayload, 'heartbeat' | 'isRunning' | 'isStale'>,
  ): Promise<void> {
    const { logger, readiness, metrics, maxBackoffMs = 30_000 } = this.options;
    for (let failures = 0; ; failures++) {
      try {
        await step();
        if (failures > 0) logger.info({ topic, partition, failures }, 'indexing resumed');
        readiness.set('database', true);
        return;
      } catch (error) {
        if (error instanceof DatabaseUnavailable) {
          metrics.databaseErrors.inc({ kind: 'transient' });
          readiness.set('database', false);
        }
        if (!isRunning() || isStale()) throw new Interrupted(error);
        const delay = Math.min(maxBackoffMs, 250 * 2 ** Math.min(failures, 10));
        logger.warn({ err: error, topic, partition, failures: failures + 1, retryInMs: delay }, 'indexing a batch failed; trying again');
        const until = Date.now() + delay;
        while (Date.now() < until) {
          await new Promise((resolve) => setTimeout(resolve, Math.min(1000, until - Date.now())));
          if (!isRunning() || isStale()) throw new Interrupted(error);
          // Rethrown as it is: kafkajs must see a rebalance error as such to rejoin the group.
          await heartbeat();
        }
      }
    }
  }

  private async indexChunk(topic: string, partition: number, chunk: readonly KafkaMessage[], nextOffset: string): Promise<void> {
    const { topics, config, output, codec, metrics, logger, groupId } = this.options;
    const mapped: Mapped[] =
      topic === topics.attempts
        ? mapAttempts(partition, await this.decodeAll<DeliveryAttempt>('attempt', chunk))
        : mapMessages(partition, await this.decodeAll<IngestMessage>('ingest', chunk), config);

    const { counts, refused } = await this.write(mapped);
    const poison = [...poisonRecords(mapped), ...refused];
    const now = Date.now();
    const quarantined: Message[] = poison.map(({ raw, poison: cause }) => {
      logger.error({ topic, partition, offset: raw.offset, reason: cause.reason, problem: cause.error }, 'record quarantined');
      return quarantineMessage(codec, topics, SERVICE, { topic, partition, ...raw }, cause, now).message;
    });
    await output.run(async (transaction) => {
      if (quarantined.length > 0) await transaction.send({ topic: topics.quarantine, messages: quarantined });
      await transaction.sendOffsets({ consumerGroupId: groupId, topics: [{ topic, partitions: [{ partition, offset: nextOffset }] }] });
    });

    metrics.recordsIndexed.inc({ topic }, chunk.length);
    metrics.rowsWritten.inc({ table: 'attempts' }, counts.attempts);
    metrics.rowsWritten.inc({ table: 'messages' }, counts.messages);
    metrics.rowsWritten.inc({ table: 'deliveries' }, counts.deliveries);
    for (const { poison: cause } of poison) metrics.quarantined.inc({ topic, reason: cause.reason });
  }

  private async decodeAll<T>(schema: 'attempt' | 'ingest', chunk: readonly KafkaMessage[]): Promise<Decoded<T>[]> {
    const decoded: Decoded<T>[] = [];
    for (const message of chunk) {
      const raw: RawRecord = { offset: message.offset, key: message.key, value: message.value, timestamp: message.timestamp };
      try {
        decoded.push({ raw, value: await this.options.codec.decode<T>(schema, message.value) });
      } catch (error) {
        const cause = undecodableCause(error);
        // Anything else (the registry unreachable) may pass: the chunk is tried again.
        if (cause === undefined) throw error;
        decoded.push({ raw, poison: cause });
      }
    }
    return decoded;
  }

  /** Writes the rows in one transaction; on a data error, record by record, refusing the culprits. */
  private async write(mapped: readonly Mapped[]): Promise<{ counts: WriteCounts; refused: Array<{ raw: RawRecord; poison: QuarantineCause }> }> {
    const rows = rowsOf(mapped);
    if (rowCount(rows) === 0) return { counts: { attempts: 0, messages: 0, deliveries: 0 }, refused: [] };
    try {
      return { counts: await this.timedWrite(rows), refused: [] };
    } catch (error) {
      if (classifySqlError(error) === 'transient') throw new DatabaseUnavailable(error);
      this.options.metrics.databaseErrors.inc({ kind: 'data' });
      this.options.logger.warn({ err: error }, 'the database refused a batch for its data; writing it record by record');
    }
    const counts: WriteCounts = { attempts: 0, messages: 0, deliveries: 0 };
    const refused: Array<{ raw: RawRecord; poison: QuarantineCause }> = [];
    for (const record of mapped) {
      if ('poison' in record) continue;
      try {
        const written = await this.timedWrite(rowsOf([record]));
        counts.attempts += written.attempts;
        counts.messages += written.messages;
        counts.deliveries += written.deliveries;
      } catch (error) {
        if (classifySqlError(error) === 'transient') throw new DatabaseUnavailable(error);
        refused.push({ raw: record.raw, poison: { reason: 'unwritable', error: `the database refused it: ${error instanceof Error ? error.message : String(error)}` } });
      }
    }
    return { counts, refused };
  }

  private async timedWrite(rows: ReturnType<typeof rowsOf>): Promise<WriteCounts> {
    const finish = this.options.metrics.batchWriteDuration.startTimer();
    const counts = await this.options.store.write(rows);
    finish();
    return counts;
  }
}
