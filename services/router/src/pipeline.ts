/**
 * The Kafka edge of the router: consumes the ingest topic (read_committed) and routes it
 * in chunks of at most ROUTER_MAX_BATCH records per partition, committing the deliveries,
 * the dedup entries and the consumed offsets in one transaction.
 *
 * kafkajs runs `eachBatch` for the partitions of one fetch at once
 * (`partitionsConsumedConcurrently`: one worker per partition of the ingest topic). Each
 * call decodes its chunk and hands it to a `GroupCommit`, which routes the chunks of all
 * the calls together and commits them in one transaction with one `sendOffsets` listing
 * every partition's next offset; each call waits for its chunk's transaction.
 *
 * kafkajs runs with `autoCommit: false` and `eachBatchAutoResolve: false`: offsets are
 * committed only through the transactions (`sendOffsets`), and a chunk's records are
 * resolved locally only after its transaction committed. When a transaction fails, it is
 * aborted and every `eachBatch` whose chunk it held throws; kafkajs then fetches those
 * partitions again from their last resolved offsets — the starts of the failed chunks.
 * When even the outcome is unknown (the commit or the abort failed), the committed offsets
 * are read back from the group and those partitions rewound to them before anything else
 * is routed from them.
 *
 * Rebalances: kafkajs rejoins the group (and so gives up revoked partitions) only after
 * every `eachBatch` of the current fetch has returned — its fetcher waits for all of a
 * fetch's batches to settle before it stops, and the runner rejoins after the fetchers
 * stopped. Each call returns only once its chunk's transaction has an outcome, so no chunk
 * is queued or in flight here when a partition is revoked. Once one call learns from its
 * heartbeat that the group is rebalancing, the others stop before their next chunk rather
 * than keep the group waiting; what they leave is fetched again after the rejoin. (A
 * member evicted from the group meanwhile is the KIP-447 limit in the README.)
 */
import type { EachBatchPayload, Kafka, KafkaMessage, Message } from 'kafkajs';
import type { IngestMessage, TopicNames } from '@tributary/schemas';
import { BatchFailed, committedPositions, GroupCommit, quarantineMessage, sendInChunks, SupervisedConsumer, TransactionOutcomeUnknown, withAdmin, type AvroCodec, type Logger, type Readiness, type TopicMessages, type TransactionalOutput } from '@tributary/shared';
import type { DedupStore } from './dedup-store.js';
import { classifyDecodeError, InvalidMessage } from './message.js';
import type { RouterMetrics } from './metrics.js';
import type { ConfigLookup, DecodedRecord } from './route-chunk.js';
import { planTransaction, recordCount, type PartitionChunk } from './transaction-plan.js';

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
  /** Key of this instance's dedup records (its transactional id): any key would do, the topic is read whole. */
  dedupRecordKey: string;
  maxBatch: number;
  sessionTimeoutMs: number;
}

export class RouterPipeline {
  private consumer: SupervisedConsumer | undefined;
  private readonly groupCommit: GroupCommit<PartitionChunk>;
  /** Partitions whose committed position must be read back before routing goes on. */
  private readonly rewindNeeded = new Set<number>();
  private rewinding: Promise<void> | undefined;
  /**
   * A heartbeat failed during the current fetch — the group is rebalancing, as a rule.
   * kafkajs fetches anew once the fetch's batches are done, so the others stop early.
   */
  private heartbeatFailed = false;

  constructor(private readonly options: PipelineOptions) {
    this.groupCommit = new GroupCommit<PartitionChunk>({
      maxRecords: options.maxBatch,
      records: (chunk) => chunk.records.length,
      commit: (chunks) => this.routeAndCommit(chunks),
    });
  }

  async start(): Promise<void> {
    const { kafka, topics, groupId, sessionTimeoutMs, dedup, readiness, logger } = this.options;
    // A fetch returns at most one batch per partition, so with a worker per partition every
    // batch of a fetch is routed at once and their chunks can share a transaction.
    const partitions = await this.ingestPartitions();
    this.consumer = new SupervisedConsumer({
      kafka,
      groupId,
      config: { sessionTimeout: sessionTimeoutMs, heartbeatInterval: Math.min(3_000, Math.floor(sessionTimeoutMs / 3)), readUncommitted: false },
      logger,
      name: 'consumer',
      readiness,
      // A replacement reads from the committed offsets: nothing is pending any more.
      onReplace: () => this.rewindNeeded.clear(),
      setup: async (consumer) => {
        consumer.on(consumer.events.GROUP_JOIN, ({ payload }) => {
          // Partitions may have come from another instance: catch up with what it committed
          // to the dedup topic before routing them. A rejoin also reads committed offsets
          // afresh, so no rewind is pending any more.
          dedup.invalidate();
          this.rewindNeeded.clear();
          logger.info({ assignment: payload.memberAssignment }, 'partitions assigned');
        });
        consumer.on(consumer.events.FETCH_START, () => {
          this.heartbeatFailed = false;
        });
        // A new group starts at the beginning: what was accepted before the first router ran is routed too.
        await consumer.subscribe({ topic: topics.ingest, fromBeginning: true });
        await consumer.run({
          autoCommit: false,
          eachBatchAutoResolve: false,
          partitionsConsumedConcurrently: partitions,
          eachBatch: (payload) => this.handleBatch(payload),
        });
      },
    });
    await this.consumer.start();
  }

  /** Stops fetching; `eachBatch` calls under way finish their chunks' transactions first. */
  async stop(): Promise<void> {
    await this.consumer?.stop();
    this.consumer = undefined;
  }

  private async ingestPartitions(): Promise<number> {
    const { kafka, topics } = this.options;
    const metadata = await withAdmin(kafka, (admin) => admin.fetchTopicMetadata({ topics: [topics.ingest] }));
    return Math.max(1, metadata.topics[0]?.partitions.length ?? 1);
  }

  private async handleBatch({ batch, resolveOffset, heartbeat, isRunning, isStale }: EachBatchPayload): Promise<void> {
    const { topic, partition, messages } = batch;
    if (this.rewindNeeded.has(partition)) {
      await this.retriable(topic, partition, () => this.rewind());
      return;
    }
    await this.retriable(topic, partition, () => this.options.dedup.ready());
    const { maxBatch, metrics } = this.options;
    for (let start = 0; start < messages.length; start += maxBatch) {
      if (!isRunning() || isStale() || this.heartbeatFailed) return;
      const finishBatch = metrics.batchDuration.startTimer();
      const slice = messages.slice(start, start + maxBatch);
      const last = slice[slice.length - 1]!;
      // The batch's last offset may be a transaction marker after the last message;
      // committing past it spares the next owner an empty fetch.
      const lastOffset = start + maxBatch >= messages.length ? batch.lastOffset() : last.offset;
      await this.retriable(topic, partition, async () => {
        const records: DecodedRecord[] = [];
        for (const message of slice) records.push(await this.decode(message));
        await this.groupCommit.submit({ topic, partition, records, nextOffset: (BigInt(lastOffset) + 1n).toString() });
      });
      finishBatch();
      resolveOffset(last.offset);
      try {
        await heartbeat();
      } catch (error) {
        this.heartbeatFailed = true;
        // Rethrown as it is: kafkajs must see a rebalance error as such to rejoin the group.
        throw error;
      }
    }
  }

  /** Runs a step of routing a batch; its failure makes kafkajs fetch the batch again. */
  private async retriable(topic: string, partition: number, step: () => Promise<void>): Promise<void> {
    try {
      await step();
    } catch (error) {
      throw new BatchFailed('routing', topic, partition, error);
    }
  }

  /** Routes the chunks of one transaction, and commits them with their offsets. */
  private async routeAndCommit(chunks: PartitionChunk[]): Promise<void> {
    const { codec, topics, config, dedup, output, metrics, logger, groupId } = this.options;
    const claims = dedup.claims();
    const plan = planTransaction(chunks, config, claims);
    // Invalid records go to the quarantine in this transaction, with the offsets that skip them.
    const quarantined: Message[] = [];
    const now = Date.now();
    for (const [index, outcome] of plan.outcomes.entries()) {
      const { topic, partition } = chunks[index]!;
      for (const { offset, raw, error } of outcome.invalid) {
        logger.error({ topic, partition, offset, reason: error.reason, problem: error.message }, 'invalid ingest record quarantined');
        quarantined.push(quarantineMessage(codec, topics, 'router', { topic, partition, offset, ...raw }, { reason: error.reason, error: error.message }, now).message);
      }
    }

    const topicMessages: TopicMessages[] = [];
    if (quarantined.length > 0) topicMessages.push({ topic: topics.quarantine, messages: quarantined });
    if (plan.deliveries.length > 0) {
      topicMessages.push({
        topic: topics.deliveries,
        messages: plan.deliveries.map((delivery) => ({ key: delivery.deliveryId, value: codec.encode(topics.deliveries, delivery) })),
      });
    }
    const dedupMessages = claims.records().map((batch) => ({ key: this.options.dedupRecordKey, value: codec.encode(topics.dedup, batch) }));
    if (dedupMessages.length > 0) topicMessages.push({ topic: topics.dedup, messages: dedupMessages });

    const records = recordCount(chunks);
    const finishTransaction = metrics.transactionDuration.startTimer();
    try {
      await output.run(async (transaction) => {
        await sendInChunks(transaction, topicMessages);
        await transaction.sendOffsets({ consumerGroupId: groupId, topics: plan.offsets });
      });
    } catch (error) {
      metrics.transactionFailures.inc();
      const partitions = chunks.map(({ partition }) => partition);
      logger.error({ err: error, topic: topics.ingest, partitions, records }, 'routing transaction failed; its chunks will be routed again');
      if (error instanceof TransactionOutcomeUnknown) {
        for (const partition of partitions) this.rewindNeeded.add(partition);
        await this.rewind().catch((rewindError: unknown) =>
          logger.error({ err: rewindError, topic: topics.ingest, partitions }, 'rewind failed; retrying before the next batch'),
        );
      }
      throw error;
    }
    finishTransaction();
    metrics.transactionSize.observe(records);
    metrics.transactionPartitions.observe(plan.offsets.reduce((sum, { partitions }) => sum + partitions.length, 0));
    claims.commit();
    for (const [index, outcome] of plan.outcomes.entries()) {
      metrics.recordCommitted(outcome);
      for (const { error } of outcome.invalid) metrics.quarantined.inc({ topic: chunks[index]!.topic, reason: error.reason });
    }
  }

  private async decode(message: KafkaMessage): Promise<DecodedRecord> {
    const { offset, value, key, timestamp } = message;
    const raw = { key, value, timestamp };
    if (value === null || value.length === 0) return { offset, raw, invalid: new InvalidMessage('not_framed', 'the record has no value') };
    try {
      return { offset, raw, message: await this.options.codec.decode<IngestMessage>('ingest', value) };
    } catch (error) {
      const invalid = classifyDecodeError(error);
      if (invalid === undefined) throw error;
      return { offset, raw, invalid };
    }
  }

  /**
   * Moves the partitions waiting for it back to the offsets the group committed (or the
   * start, if none). One rewind at a time, for every partition waiting: the partitions of
   * one failed transaction share it; one marked while it runs gets the next.
   */
  private rewind(): Promise<void> {
    this.rewinding ??= this.rewindWaiting().finally(() => {
      this.rewinding = undefined;
    });
    return this.rewinding;
  }

  private async rewindWaiting(): Promise<void> {
    const { kafka, groupId, logger, output, topics } = this.options;
    const topic = topics.ingest;
    // Only once a producer with our id is registered again is the transaction of unknown
    // outcome finished, and the committed offsets final.
    await output.ensureRegistered();
    const offsets = await committedPositions(kafka, groupId, topic, this.rewindNeeded);
    for (const [partition, offset] of offsets) {
      this.consumer?.current?.seek({ topic, partition, offset });
      this.rewindNeeded.delete(partition);
      logger.warn({ topic, partition, offset }, 'partition rewound to its committed offset');
    }
  }
}
