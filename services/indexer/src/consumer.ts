/**
 * The Kafka edge of the indexer: consumes `<ns>.attempts.v1` and `<ns>.ingest.v1`
 * (read_committed) and, for each fetched batch, in chunks of at most INDEXER_MAX_BATCH
 * records and INDEXER_MAX_BATCH_BYTES bytes: decodes and maps to rows, then hands the chunk
 * to a group commit. kafkajs runs `eachBatch` for every partition of both topics at once,
 * and the chunks handed over within LINGER_MS (or while a commit is in flight) are written
 * in one database transaction, then their offsets committed: by a plain offset commit, or,
 * when they hold poison, in one Kafka transaction with its quarantine records — so a poison
 * record is set aside exactly when the offset that skips it is committed. (One transaction of
 * each kind per partition per fetch made the indexer the busiest process of the pipeline: at
 * 1,000 events/s it spent 0.6 s of CPU per 1,000 events on a dozen small transactions a
 * second, and the broker as much again.)
 *
 * At-least-once plus idempotent writes: a chunk whose offset was not committed is indexed
 * again, and writes nothing new (see store/write.ts). Nothing is skipped: a chunk that fails
 * for any reason but its own records — the database down or slow, the registry or broker
 * away — is retried, with backoff, for as long as it takes, inside the batch handler: the
 * consumer keeps heartbeating (so keeps its partitions), /readyz says 503 meanwhile, and the
 * process never exits for it. A rebalance or shutdown ends the wait; kafkajs then fetches
 * from the last committed offset.
 *
 * A record the database refuses for its data (SQLSTATE classes 22, 23, 54), or whose write
 * fails with an error that names no database failure while the database answers, would fail
 * its chunk — and every chunk of its group commit — forever: the chunks are written again one
 * record at a time, and the refused one is quarantined as `unwritable` (write-chunks.ts).
 */
import type { EachBatchPayload, Kafka, KafkaMessage, Message } from 'kafkajs';
import type { DeliveryAttempt, IngestMessage, TopicNames } from '@tributary/schemas';
import { GroupCommit, quarantineMessage, SupervisedConsumer, undecodableCause, untilSuccess, withAdmin, type AvroCodec, type ConfigFreshness, type Logger, type Readiness, type TransactionalOutput } from '@tributary/shared';
import { chunkRecords } from './chunks.js';
import type { IndexerMetrics } from './metrics.js';
import { mapAttempts, mapMessagesWhenCurrent, offsetsOf, poisonRecords, type Decoded, type Mapped, type RawRecord } from './plan.js';
import type { RoutingConfig } from './rows.js';
import type { DeliveryLogStore } from './store/store.js';
import { ChunkWriter, DatabaseUnavailable, type IndexChunk, type Refused } from './write-chunks.js';

export interface IndexerConsumerOptions {
  kafka: Kafka;
  codec: AvroCodec;
  topics: TopicNames;
  config: RoutingConfig;
  /**
   * The config view's read-your-writes: a message's routing is recomputed here, so the view must
   * hold what the router held when it routed the message (at least every config record written
   * before the message was received), or a message sent right after its destination was created
   * shows as `no_destinations` beside its deliveries.
   */
  freshness: Pick<ConfigFreshness, 'caughtUpSince'>;
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
  /** How long the first chunk of a commit waits for others (LINGER_MS by default). */
  lingerMs?: number;
}

/**
 * The log is read by people: a tenth of a second more before a record shows is invisible to
 * them, and it makes the writes a handful of transactions a second whatever the partition count.
 */
export const LINGER_MS = 100;

/**
 * The indexer's fetches wait at the broker for this much committed data, or FETCH_WAIT_MS.
 * The delivery path's consumers take each record the moment it is committed; the log need
 * not, and with `minBytes: 1` it fetched — and wrote a database transaction — for every
 * commit of the router's and the dispatcher's, a hundred-odd records at a time at 1,000
 * events/s. Its cost per record falls with the size of a write (PGlite: about 110 µs a
 * delivery written 100 at a time, 80 µs 500 at a time), so it reads in larger pieces.
 */
export const FETCH_MIN_BYTES = 256 * 1024;
/** The longest a record waits at the broker for others: a quarter of a second, invisible in a log read by people. */
export const FETCH_WAIT_MS = 250;

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
  private readonly groupCommit: GroupCommit<IndexChunk>;
  private readonly writer: ChunkWriter;
  /** Ends the start-up wait for the broker when the indexer stops. */
  private readonly stopping = new AbortController();

  constructor(private readonly options: IndexerConsumerOptions) {
    this.writer = new ChunkWriter({ store: options.store, metrics: options.metrics, logger: options.logger });
    this.groupCommit = new GroupCommit<IndexChunk>({
      maxRecords: options.maxBatch,
      lingerMs: options.lingerMs ?? LINGER_MS,
      records: (chunk) => chunk.records,
      commit: (chunks) => this.commitChunks(chunks),
    });
  }

  async start(): Promise<void> {
    const { kafka, topics, groupId, logger, readiness, sessionTimeoutMs } = this.options;
    // A worker per partition of every topic, so every batch of a fetch can join one commit.
    // Waited out like every start-up step: with the broker away here the indexer used to exit.
    const metadata = await untilSuccess(() => withAdmin(kafka, (admin) => admin.fetchTopicMetadata({ topics: [topics.attempts, topics.ingest, topics.ingestOverflow] })), {
      logger,
      doing: 'reading the partitions of the topics it indexes',
      signal: this.stopping.signal,
    });
    const partitions = Math.max(1, metadata.topics.reduce((total, topic) => total + topic.partitions.length, 0));
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
        minBytes: FETCH_MIN_BYTES,
        maxWaitTimeInMs: FETCH_WAIT_MS,
      },
      logger,
      name: 'consumer',
      readiness,
      setup: async (consumer) => {
        consumer.on(consumer.events.GROUP_JOIN, ({ payload }) => logger.info({ assignment: payload.memberAssignment }, 'partitions assigned'));
        // A new group starts at the beginning: what was written before the first indexer ran is indexed too.
        await consumer.subscribe({ topics: [topics.attempts, topics.ingest, topics.ingestOverflow], fromBeginning: true });
        await consumer.run({ autoCommit: false, eachBatchAutoResolve: false, partitionsConsumedConcurrently: partitions, eachBatch: (payload) => this.handleBatch(payload) });
      },
    });
    await this.consumer.start();
  }

  async stop(): Promise<void> {
    this.stopping.abort();
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
      let mapped: Mapped[] | undefined;
      await this.untilDone(
        topic,
        partition,
        async () => {
          // Decoding needs the registry, which may be away: mapped once it succeeds, then kept.
          mapped ??= await this.mapChunk(topic, partition, chunk);
          await this.groupCommit.submit({ topic, partition, mapped, nextOffset, records: chunk.length });
        },
        { heartbeat, isRunning, isStale },
      );
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

  private async mapChunk(topic: string, partition: number, chunk: readonly KafkaMessage[]): Promise<Mapped[]> {
    const { topics, config, freshness } = this.options;
    if (topic === topics.attempts) return mapAttempts(partition, await this.decodeAll<DeliveryAttempt>('attempt', chunk));
    return mapMessagesWhenCurrent(partition, await this.decodeAll<IngestMessage>('ingest', chunk), config, freshness);
  }

  /** Writes the chunks' rows in one database transaction, then commits their offsets (and quarantine: `commitOffsets`). */
  private async commitChunks(chunks: IndexChunk[]): Promise<void> {
    const { topics, codec, metrics, logger } = this.options;
    const { counts, refused } = await this.writer.write(chunks);
    const poison: Refused[] = [...chunks.flatMap(({ topic, partition, mapped }) => poisonRecords(mapped).map((record) => ({ topic, partition, ...record }))), ...refused];
    const now = Date.now();
    const quarantined: Message[] = poison.map(({ topic, partition, raw, poison: cause }) => {
      logger.error({ topic, partition, offset: raw.offset, reason: cause.reason, problem: cause.error }, 'record quarantined');
      return quarantineMessage(codec, topics, SERVICE, { topic, partition, ...raw }, cause, now).message;
    });
    await this.commitOffsets(offsetsOf(chunks), quarantined);

    for (const { topic, records } of chunks) metrics.recordsIndexed.inc({ topic }, records);
    metrics.rowsWritten.inc({ table: 'attempts' }, counts.attempts);
    metrics.rowsWritten.inc({ table: 'messages' }, counts.messages);
    metrics.rowsWritten.inc({ table: 'deliveries' }, counts.deliveries);
    for (const { topic, poison: cause } of poison) metrics.quarantined.inc({ topic, reason: cause.reason });
  }

  /**
   * Offsets alone need no Kafka transaction: rows are written idempotently, so an offset
   * commit lost to a crash only has its chunks indexed again, writing nothing new. A plain
   * commit is one request to the group coordinator and one append; a transaction adds two
   * requests, the commit marker and two transaction-log appends — at 1,000 events/s a tenth of
   * the broker's requests. It is also fenced by the group's generation, so a member that has
   * lost its partitions cannot commit for them. Quarantine records and the offsets that skip
   * them must be written together: those go in a transaction.
   */
  private async commitOffsets(offsets: ReturnType<typeof offsetsOf>, quarantined: Message[]): Promise<void> {
    const { topics, output, groupId } = this.options;
    if (quarantined.length > 0) {
      await output.run(async (transaction) => {
        await transaction.send({ topic: topics.quarantine, messages: quarantined });
        await transaction.sendOffsets({ consumerGroupId: groupId, topics: offsets });
      });
      return;
    }
    const consumer = this.consumer?.current;
    // Being replaced after a crash: its batches are fetched again by the next one.
    if (!consumer) throw new Error('the consumer is being replaced; its batches are read again');
    await consumer.commitOffsets(offsets.flatMap(({ topic, partitions }) => partitions.map(({ partition, offset }) => ({ topic, partition, offset }))));
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
}

