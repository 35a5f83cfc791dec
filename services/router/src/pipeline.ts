/**
 * The Kafka edge of the router: consumes the ingest topic (read_committed) and, chunk by
 * chunk of at most ROUTER_MAX_BATCH records, routes them and commits the deliveries, the
 * dedup entries and the consumed offsets in one transaction.
 *
 * kafkajs runs with `autoCommit: false` and `eachBatchAutoResolve: false`: offsets are
 * committed only through the transaction (`sendOffsets`), and a chunk's records are
 * resolved locally only after its transaction committed. When a chunk fails, the
 * transaction is aborted and the error thrown; kafkajs then fetches again from the last
 * resolved offset — the start of the failed chunk. When even the outcome is unknown (the
 * commit or the abort failed), the committed offset is read back from the group and the
 * partition rewound to it before anything else is routed from it.
 */
import type { Consumer, EachBatchPayload, Kafka, KafkaMessage } from 'kafkajs';
import type { IngestMessage, TopicNames } from '@tributary/schemas';
import { createConsumer, sendInChunks, TransactionOutcomeUnknown, withAdmin, type AvroCodec, type Logger, type Readiness, type TopicMessages, type TransactionalOutput } from '@tributary/shared';
import type { DedupStore } from './dedup-store.js';
import { classifyDecodeError, InvalidMessage } from './message.js';
import type { RouterMetrics } from './metrics.js';
import { routeChunk, type ConfigLookup, type DecodedRecord } from './route-chunk.js';

export interface PipelineOptions {
  kafka: Kafka;
  codec: AvroCodec;
  topics: TopicNames;
  config: ConfigLookup;
  dedup: DedupStore;
  output: TransactionalOutput;
  metrics: RouterMetrics;
  logger: Logger;
  readiness: Readiness;
  groupId: string;
  maxBatch: number;
  sessionTimeoutMs: number;
  /** The consumer stopped for good (kafkajs will not restart it). */
  onFatal(error: Error): void;
}

/**
 * What `eachBatch` throws when part of a batch could not be routed and committed.
 * Deliberately not a KafkaJS error: kafkajs retries a batch that failed with it (with
 * backoff, and by rejoining the group after repeated failures), whereas a non-retriable
 * KafkaJS error — such as the producer having been fenced, which the router has already
 * repaired by replacing its producer — would stop the consumer for good.
 */
export class BatchFailed extends Error {
  constructor(topic: string, partition: number, override readonly cause: unknown) {
    super(`routing ${topic}[${partition}] failed: ${cause instanceof Error ? cause.message : String(cause)}`);
    this.name = 'BatchFailed';
  }
}

export class RouterPipeline {
  private consumer: Consumer | undefined;
  /** Partitions whose committed position must be read back before routing goes on. */
  private readonly rewindNeeded = new Set<number>();

  constructor(private readonly options: PipelineOptions) {}

  async start(): Promise<void> {
    const { kafka, topics, groupId, sessionTimeoutMs, dedup, readiness, logger } = this.options;
    const consumer = createConsumer(kafka, groupId, {
      sessionTimeout: sessionTimeoutMs,
      heartbeatInterval: Math.min(3_000, Math.floor(sessionTimeoutMs / 3)),
      readUncommitted: false,
    });
    this.consumer = consumer;
    consumer.on(consumer.events.GROUP_JOIN, ({ payload }) => {
      // Partitions may have come from another instance: catch up with what it committed
      // to the dedup topic before routing them. A rejoin also reads committed offsets
      // afresh, so no rewind is pending any more.
      dedup.invalidate();
      this.rewindNeeded.clear();
      readiness.set('consumer', true);
      logger.info({ assignment: payload.memberAssignment }, 'partitions assigned');
    });
    consumer.on(consumer.events.CRASH, ({ payload }) => {
      readiness.set('consumer', false);
      logger.error({ err: payload.error, restart: payload.restart }, 'ingest consumer crashed');
      if (!payload.restart) this.options.onFatal(payload.error);
    });
    await consumer.connect();
    // A new group starts at the beginning: what was accepted before the first router ran is routed too.
    await consumer.subscribe({ topic: topics.ingest, fromBeginning: true });
    await consumer.run({ autoCommit: false, eachBatchAutoResolve: false, eachBatch: (payload) => this.handleBatch(payload) });
  }

  async stop(): Promise<void> {
    await this.consumer?.disconnect();
    this.consumer = undefined;
  }

  private async handleBatch({ batch, resolveOffset, heartbeat, isRunning, isStale }: EachBatchPayload): Promise<void> {
    const { topic, partition, messages } = batch;
    if (this.rewindNeeded.has(partition)) {
      await this.retriable(topic, partition, () => this.rewind(topic, partition));
      return;
    }
    await this.retriable(topic, partition, () => this.options.dedup.ready());
    const { maxBatch } = this.options;
    for (let start = 0; start < messages.length; start += maxBatch) {
      if (!isRunning() || isStale()) return;
      const chunk = messages.slice(start, start + maxBatch);
      const last = chunk[chunk.length - 1]!;
      // The batch's last offset may be a transaction marker after the last message;
      // committing past it spares the next owner an empty fetch.
      const lastOffset = start + maxBatch >= messages.length ? batch.lastOffset() : last.offset;
      await this.retriable(topic, partition, async () => {
        try {
          await this.routeAndCommit(topic, partition, chunk, (BigInt(lastOffset) + 1n).toString());
        } catch (error) {
          if (error instanceof TransactionOutcomeUnknown) {
            this.rewindNeeded.add(partition);
            await this.rewind(topic, partition).catch((rewindError: unknown) =>
              this.options.logger.error({ err: rewindError, topic, partition }, 'rewind failed; retrying before the next batch'),
            );
          }
          throw error;
        }
      });
      resolveOffset(last.offset);
      this.options.metrics.consumerLag.set({ partition: String(partition) }, Math.max(0, Number(batch.highWatermark) - 1 - Number(lastOffset)));
      // Left unwrapped: kafkajs must see a rebalance error as such to rejoin the group.
      await heartbeat();
    }
  }

  /** Runs a step of routing a batch; its failure makes kafkajs fetch the batch again. */
  private async retriable(topic: string, partition: number, step: () => Promise<void>): Promise<void> {
    try {
      await step();
    } catch (error) {
      throw new BatchFailed(topic, partition, error);
    }
  }

  private async routeAndCommit(topic: string, partition: number, chunk: KafkaMessage[], nextOffset: string): Promise<void> {
    const { codec, topics, config, dedup, output, metrics, logger, groupId } = this.options;
    const finishBatch = metrics.batchDuration.startTimer();
    const decoded: DecodedRecord[] = [];
    for (const message of chunk) decoded.push(await this.decode(message));
    const claims = dedup.claims();
    const outcome = routeChunk(decoded, config, claims);
    for (const { offset, error } of outcome.invalid) {
      logger.error({ topic, partition, offset, reason: error.reason, problem: error.message }, 'invalid ingest record skipped');
    }

    const topicMessages: TopicMessages[] = [];
    if (outcome.deliveries.length > 0) {
      topicMessages.push({
        topic: topics.deliveries,
        messages: outcome.deliveries.map((delivery) => ({ key: delivery.deliveryId, value: codec.encode(topics.deliveries, delivery) })),
      });
    }
    const dedupMessages = [...claims.entries()].map(([key, firstSeenAt]) => ({ key, value: codec.encode(topics.dedup, { firstSeenAt }) }));
    if (dedupMessages.length > 0) topicMessages.push({ topic: topics.dedup, messages: dedupMessages });

    const finishTransaction = metrics.transactionDuration.startTimer();
    try {
      await output.run(async (transaction) => {
        await sendInChunks(transaction, topicMessages);
        await transaction.sendOffsets({ consumerGroupId: groupId, topics: [{ topic, partitions: [{ partition, offset: nextOffset }] }] });
      });
    } catch (error) {
      metrics.transactionFailures.inc();
      logger.error({ err: error, topic, partition, records: chunk.length }, 'routing transaction failed; the chunk will be routed again');
      throw error;
    }
    finishTransaction();
    claims.commit();
    metrics.recordCommitted(outcome);
    finishBatch();
  }

  private async decode(message: KafkaMessage): Promise<DecodedRecord> {
    const { offset, value } = message;
    if (value === null || value.length === 0) return { offset, invalid: new InvalidMessage('undecodable', 'the record has no value') };
    try {
      return { offset, message: await this.options.codec.decode<IngestMessage>('ingest', value) };
    } catch (error) {
      const invalid = classifyDecodeError(error);
      if (invalid === undefined) throw error;
      return { offset, invalid };
    }
  }

  /** Moves the partition back to the offset the group committed (or the start, if none). */
  private async rewind(topic: string, partition: number): Promise<void> {
    const { kafka, groupId, logger, output } = this.options;
    // Only once a producer with our id is registered again is the transaction of unknown
    // outcome finished, and the committed offset final.
    await output.ensureRegistered();
    const offset = await withAdmin(kafka, async (admin) => {
      const [committed] = await admin.fetchOffsets({ groupId, topics: [topic] });
      const found = committed?.partitions.find((entry) => entry.partition === partition)?.offset;
      if (found !== undefined && BigInt(found) >= 0n) return found;
      return (await admin.fetchTopicOffsets(topic)).find((entry) => entry.partition === partition)?.low ?? '0';
    });
    this.consumer?.seek({ topic, partition, offset });
    this.rewindNeeded.delete(partition);
    logger.warn({ topic, partition, offset }, 'partition rewound to its committed offset');
  }
}
