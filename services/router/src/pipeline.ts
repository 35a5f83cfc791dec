/**
 * The Kafka edge of the router: consumes the ingest topic and its overflow lane
 * (read_committed, one consumer and group each) and routes them
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
 * Lanes: ingest writes what a source sends past its share (INGEST_SOURCE_RATE) to the
 * overflow topic. Each lane has its own consumer, so a backlog in the overflow lane never
 * sits in the main lane's fetches, and the two share the group commit, which gives the main
 * lane's chunks the next transaction: a main-lane record waits at most for the transaction
 * in flight, however far behind the overflow lane is. Sharing the commit also keeps dedup
 * exact across lanes: every transaction's claims are taken against everything committed
 * before it, whichever lane it came from. One transaction may carry offsets of both groups.
 * The overflow lane's deliveries are written to the dispatchers' retry lane, not the
 * first-attempt topic (placement.ts), so that its backlog does not form there either.
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
import { BatchFailed, committedPositions, GroupCommit, quarantineMessage, sendInChunks, SupervisedConsumer, TransactionOutcomeUnknown, untilSuccess, withAdmin, type AvroCodec, type ConfigFreshness, type Logger, type Readiness, type RetryLadder, type TopicMessages, type TransactionalOutput } from '@tributary/shared';
import type { DedupStore } from './dedup-store.js';
import { classifyDecodeError, InvalidMessage } from './message.js';
import type { RouterMetrics } from './metrics.js';
import { MainLaneShare } from './main-lane-share.js';
import { placeDelivery, type DestinationHealthLookup, type RetryLaneReason } from './placement.js';
import { routingWeight, type ConfigLookup, type DecodedRecord } from './route-chunk.js';
import { ConfigChecks } from './config-checks.js';
import { configFilteredSources, planTransaction, recordCount, type PartitionChunk } from './transaction-plan.js';

/** An overflow lane that is behind is routed in chunks of ROUTER_MAX_BATCH / this. */
const BEHIND_CHUNK_DIVISOR = 4;

/** One ingest topic the router reads, with its consumer group. The first lane goes first. */
export interface IngestLaneSource {
  topic: string;
  groupId: string;
  /** Readiness check and log name of its consumer. */
  name: string;
}

export interface PipelineOptions {
  kafka: Kafka;
  codec: AvroCodec;
  topics: TopicNames;
  config: ConfigLookup;
  /**
   * Read-your-writes for config (shared config-freshness.ts, as the indexer and the dispatcher
   * use it): a transaction that filtered a message for config is routed once the view holds what
   * was written before its messages were received (`configFilteredSources`, config-checks.ts). A check that cannot finish — the config reader down —
   * gives up after its timeout and the transaction is routed with the view as it stands.
   */
  freshness: Pick<ConfigFreshness, 'caughtUpSince'>;
  /** Changes whenever the config view applies a change (ConfigView.version). */
  configVersion: () => number;
  dedup: DedupStore;
  output: TransactionalOutput;
  metrics: RouterMetrics;
  logger: Logger;
  readiness: Readiness;
  /** The main ingest topic first, then the overflow lane. */
  lanes: readonly IngestLaneSource[];
  /**
   * The dispatchers' published health (the health topic), by which each delivery is placed
   * (`placeDelivery`): first-attempt topic, retry lane, or deferred straight onto the ladder.
   * Without it, every delivery goes the first way.
   */
  health?: DestinationHealthLookup;
  /** The retry ladder (RETRY_LADDER, RETRY_WINDOW: the dispatcher's and the scheduler's). */
  ladder: RetryLadder;
  /** Key of this instance's dedup records (its transactional id): any key would do, the topic is read whole. */
  dedupRecordKey: string;
  maxBatch: number;
  /** Each source's share of the main lane, in units a second by record timestamps (ROUTER_SOURCE_RATE; 0: none). */
  sourceRate: number;
  /** Estimated bytes a transaction writes (`routingWeight`); a record larger alone still goes. */
  maxBatchBytes: number;
  sessionTimeoutMs: number;
}

export class RouterPipeline {
  private readonly consumers = new Map<string, SupervisedConsumer>();
  private readonly groupCommit: GroupCommit<PartitionChunk>;
  /** Partitions, by topic, whose committed position must be read back before routing goes on. */
  private readonly rewindNeeded = new Map<string, Set<number>>();
  private rewinding: Promise<void> | undefined;
  /**
   * Lanes in which a heartbeat failed during the current fetch — the group is rebalancing, as
   * a rule. kafkajs fetches anew once the fetch's batches are done, so the others stop early.
   */
  private readonly heartbeatFailed = new Set<string>();
  private readonly groupOf: ReadonlyMap<string, string>;
  private readonly mainTopic: string | undefined;
  private readonly share: MainLaneShare;
  private readonly configChecks = new ConfigChecks();
  /** Ends the start-up wait for the broker when the router stops. */
  private readonly stopping = new AbortController();

  constructor(private readonly options: PipelineOptions) {
    const mainTopic = options.lanes[0]?.topic;
    this.mainTopic = mainTopic;
    // With one lane there is nowhere to move a record to.
    this.share = new MainLaneShare(options.lanes.length > 1 ? options.sourceRate : 0, options.config);
    this.groupOf = new Map(options.lanes.map(({ topic, groupId }) => [topic, groupId]));
    this.groupCommit = new GroupCommit<PartitionChunk>({
      maxRecords: options.maxBatch,
      // Records moved to the overflow lane are a copy each, not a routing: they count by their
      // bytes only, so a backfill is moved past in a few large transactions instead of one per
      // ROUTER_MAX_BATCH records (each a round of transaction requests the others' records behind it wait for).
      records: (chunk) => chunk.routed,
      maxBytes: options.maxBatchBytes,
      bytes: (chunk) => chunk.bytes,
      priority: (chunk) => (chunk.topic === mainTopic ? 1 : 0),
      yields: (chunk) => chunk.behind === true,
      commit: (chunks) => this.routeAndCommit(chunks),
    });
  }

  async start(): Promise<void> {
    for (const lane of this.options.lanes) await this.startLane(lane);
  }

  private async startLane({ topic, groupId, name }: IngestLaneSource): Promise<void> {
    const { kafka, sessionTimeoutMs, dedup, readiness, logger } = this.options;
    // A fetch returns at most one batch per partition, so with a worker per partition every
    // batch of a fetch is routed at once and their chunks can share a transaction.
    // Waited out like every start-up step: with the broker away here the router used to exit.
    const partitions = await untilSuccess(() => this.partitionCount(topic), { logger, doing: `reading the partitions of ${topic}`, signal: this.stopping.signal });
    const consumer = new SupervisedConsumer({
      kafka,
      groupId,
      config: { sessionTimeout: sessionTimeoutMs, heartbeatInterval: Math.min(3_000, Math.floor(sessionTimeoutMs / 3)), readUncommitted: false },
      logger,
      name,
      readiness,
      // A replacement reads from the committed offsets: nothing is pending any more.
      onReplace: () => this.rewindNeeded.delete(topic),
      setup: async (consumer) => {
        consumer.on(consumer.events.GROUP_JOIN, ({ payload }) => {
          // Partitions may have come from another instance: catch up with what it committed
          // to the dedup topic before routing them. A rejoin also reads committed offsets
          // afresh, so no rewind is pending any more.
          dedup.invalidate();
          this.rewindNeeded.delete(topic);
          logger.info({ topic, assignment: payload.memberAssignment }, 'partitions assigned');
        });
        consumer.on(consumer.events.FETCH_START, () => {
          this.heartbeatFailed.delete(topic);
        });
        // A new group starts at the beginning: what was accepted before the first router ran is routed too.
        await consumer.subscribe({ topic, fromBeginning: true });
        await consumer.run({
          autoCommit: false,
          eachBatchAutoResolve: false,
          partitionsConsumedConcurrently: partitions,
          eachBatch: (payload) => this.handleBatch(payload),
        });
      },
    });
    this.consumers.set(topic, consumer);
    await consumer.start();
  }

  /** Stops fetching; `eachBatch` calls under way finish their chunks' transactions first. */
  async stop(): Promise<void> {
    this.stopping.abort();
    await Promise.all([...this.consumers.values()].map((consumer) => consumer.stop()));
    this.consumers.clear();
  }

  private async partitionCount(topic: string): Promise<number> {
    const { kafka } = this.options;
    const metadata = await withAdmin(kafka, (admin) => admin.fetchTopicMetadata({ topics: [topic] }));
    return Math.max(1, metadata.topics[0]?.partitions.length ?? 1);
  }

  private async handleBatch({ batch, resolveOffset, heartbeat, isRunning, isStale }: EachBatchPayload): Promise<void> {
    const { topic, partition, messages } = batch;
    if (this.rewindNeeded.get(topic)?.has(partition)) {
      await this.retriable(topic, partition, () => this.rewind());
      return;
    }
    await this.retriable(topic, partition, () => this.options.dedup.ready());
    const { metrics } = this.options;
    // An overflow lane that is behind is routed in smaller chunks, one per transaction that
    // carries main-lane chunks (GroupCommit `yields`): those transactions, the main lane's
    // wait, stay short while a burst is routed. Measured at 4,000 events/s offered on two
    // cores, transactions of the main lane plus a full overflow chunk took 0.85 s, and the
    // main lane's records waited that long.
    const main = topic === this.mainTopic;
    const behind = !main && Number(batch.offsetLag()) > this.options.maxBatch;
    const divisor = behind ? BEHIND_CHUNK_DIVISOR : 1;
    const maxBatch = Math.max(1, Math.floor(this.options.maxBatch / divisor));
    const maxBytes = Math.max(1, Math.floor(this.options.maxBatchBytes / divisor));
    for (let start = 0; start < messages.length; ) {
      if (!isRunning() || isStale() || this.heartbeatFailed.has(topic)) return;
      const finishBatch = metrics.batchDuration.startTimer();
      // A chunk ends at maxBatch records or once it reaches maxBytes of estimated output.
      let end = start;
      await this.retriable(topic, partition, async () => {
        const records: DecodedRecord[] = [];
        const readAt = Date.now();
        let bytes = 0;
        let routed = 0;
        try {
          while (end < messages.length && routed < maxBatch && bytes < maxBytes) {
            const record = await this.decode(messages[end]!);
            // A source past its share of the main lane (a producer writing to it directly) is moved on, not routed here.
            if (main && 'message' in record && this.share.diverts(record, Date.now())) record.diverted = true;
            else routed++;
            records.push(record);
            bytes += routingWeight(record, this.options.config);
            end++;
          }
          // The batch's last offset may be a transaction marker after the last message;
          // committing past it spares the next owner an empty fetch.
          const lastOffset = end >= messages.length ? batch.lastOffset() : messages[end - 1]!.offset;
          const chunk: PartitionChunk = { topic, partition, records, routed, bytes, nextOffset: (BigInt(lastOffset) + 1n).toString(), behind, readAt };
          await this.groupCommit.submit(chunk);
        } catch (error) {
          // The chunk is fetched and judged again: what it took of the main lane's shares is
          // given back, or its records would find their own units spent and be moved. (When
          // even the outcome is unknown and the transaction did commit, the share is short of
          // one chunk: the cost of being sure not to move records twice over.)
          this.share.giveBack(records);
          throw error;
        }
      });
      finishBatch();
      resolveOffset(messages[end - 1]!.offset);
      start = end;
      try {
        await heartbeat();
      } catch (error) {
        this.heartbeatFailed.add(topic);
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
    const { codec, topics, config, freshness, configVersion, dedup, output, metrics, logger } = this.options;
    let claims = dedup.claims();
    let plan = planTransaction(chunks, config, claims);
    // A message filtered for config (no such source or destination, one disabled) may have met a
    // view a step behind what was written before it was received: a destination created through
    // the admin API and used at once. Such a transaction waits until the view is as recent as its
    // messages (configFilteredSources), and is planned again if the view changed meanwhile. Only
    // then: a check is a broker round trip, and one per transaction cost the router a third more
    // CPU at 1,000 events/s (ANALYSIS.md) for what nearly always finds nothing new.
    // A source that stays filtered is not checked at every transaction (config-checks.ts).
    const filtered = configFilteredSources(plan, chunks);
    const since = filtered.size > 0 ? this.configChecks.neededSince(filtered) : undefined;
    if (since !== undefined) {
      const seen = configVersion();
      await freshness.caughtUpSince(since);
      this.configChecks.confirmed(filtered, since);
      if (configVersion() !== seen) {
        claims = dedup.claims();
        plan = planTransaction(chunks, config, claims);
      }
    }
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
    // Copied as read — key and value; routed from the overflow lane, with its dedup, after the
    // main lane. Not its timestamp: a copy stamped with a producer's old time could fall to the
    // overflow topic's retention before it is read.
    if (plan.diverted.length > 0) {
      topicMessages.push({ topic: topics.ingestOverflow, messages: plan.diverted.map(({ raw }) => ({ key: raw.key, value: raw.value })) });
    }
    // A destination whose circuit is open (or probing) at every dispatcher would only be deferred there —
    // after the dispatcher read it in line with everyone else's first attempts, which a
    // burst to a failing destination held back by seconds. One whose attempts hang, or that is
    // slower than its traffic, would hold them up as long (congested). It goes through the retry lane
    // instead, read apart; the dispatcher still decides (defer, or attempt if it closed). One whose
    // circuit stays open everywhere for a while yet is deferred here, onto the ladder (placement.ts).
    // What was read from the overflow lane goes through the retry lane too: a source's burst waits
    // behind itself at the dispatchers as it does here, not in front of everyone's first attempts.
    const parked = new Map<string, { destination: string; reason: RetryLaneReason; count: number }>();
    const deferred = new Map<string, number>();
    const first: Message[] = [];
    const retryLane: Message[] = [];
    const tiers = new Map<string, Message[]>();
    const { health, ladder } = this.options;
    for (const [index, outcome] of plan.outcomes.entries()) {
      const fromOverflow = chunks[index]!.topic !== this.mainTopic;
      for (const delivery of outcome.deliveries) {
        const placement = placeDelivery(delivery, health, ladder, now, fromOverflow);
        if (placement.lane === 'first') {
          first.push({ key: delivery.deliveryId, value: codec.encode(topics.deliveries, delivery) });
        } else if (placement.lane === 'tier') {
          const topic = topics.retry(placement.record.tier);
          let messages = tiers.get(topic);
          if (!messages) tiers.set(topic, (messages = []));
          messages.push({ key: delivery.deliveryId, value: codec.encode(topic, placement.record) });
          deferred.set(delivery.destinationId, (deferred.get(delivery.destinationId) ?? 0) + 1);
        } else {
          retryLane.push({ key: delivery.deliveryId, value: codec.encode(topics.dueRetries, delivery) });
          const key = `${placement.reason}/${delivery.destinationId}`;
          const counted = parked.get(key);
          if (counted) counted.count++;
          else parked.set(key, { destination: delivery.destinationId, reason: placement.reason, count: 1 });
        }
      }
    }
    if (first.length > 0) topicMessages.push({ topic: topics.deliveries, messages: first });
    if (retryLane.length > 0) topicMessages.push({ topic: topics.dueRetries, messages: retryLane });
    for (const [topic, messages] of tiers) topicMessages.push({ topic, messages });
    const dedupMessages = claims.records().map((batch) => ({ key: this.options.dedupRecordKey, value: codec.encode(topics.dedup, batch) }));
    if (dedupMessages.length > 0) topicMessages.push({ topic: topics.dedup, messages: dedupMessages });

    const records = recordCount(chunks);
    const finishTransaction = metrics.transactionDuration.startTimer();
    try {
      await output.run(async (transaction) => {
        await sendInChunks(transaction, topicMessages);
        // One commit per lane's group; a transaction may carry both.
        for (const offsets of plan.offsets) await transaction.sendOffsets({ consumerGroupId: this.groupOf.get(offsets.topic)!, topics: [offsets] });
      });
    } catch (error) {
      metrics.transactionFailures.inc();
      const partitions = chunks.map(({ topic, partition }) => `${topic}/${partition}`);
      logger.error({ err: error, partitions, records }, 'routing transaction failed; its chunks will be routed again');
      if (error instanceof TransactionOutcomeUnknown) {
        for (const { topic, partition } of chunks) {
          let waiting = this.rewindNeeded.get(topic);
          if (!waiting) this.rewindNeeded.set(topic, (waiting = new Set()));
          waiting.add(partition);
        }
        await this.rewind().catch((rewindError: unknown) => logger.error({ err: rewindError, partitions }, 'rewind failed; retrying before the next batch'));
      }
      throw error;
    }
    finishTransaction();
    metrics.transactionSize.observe(records);
    metrics.transactionBytes.observe(valueBytes(topicMessages));
    metrics.transactionPartitions.observe(plan.offsets.reduce((sum, { partitions }) => sum + partitions.length, 0));
    claims.commit();
    for (const { destination, reason, count } of parked.values()) metrics.parked.inc({ destination, reason }, count);
    for (const [destination, count] of deferred) metrics.deferred.inc({ destination }, count);
    const divertedBySource = new Map<string, number>();
    for (const { sourceId } of plan.diverted) divertedBySource.set(sourceId, (divertedBySource.get(sourceId) ?? 0) + 1);
    for (const [source, count] of divertedBySource) metrics.diverted.inc({ source }, count);
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
    const { kafka, logger, output } = this.options;
    // Only once a producer with our id is registered again is the transaction of unknown
    // outcome finished, and the committed offsets final.
    await output.ensureRegistered();
    for (const [topic, waiting] of this.rewindNeeded) {
      const offsets = await committedPositions(kafka, this.groupOf.get(topic)!, topic, waiting);
      for (const [partition, offset] of offsets) {
        const moved = this.consumers.get(topic)?.seek({ topic, partition, offset }) ?? false;
        waiting.delete(partition);
        // Not moved: the consumer is being restarted, and its successor reads from that offset anyway.
        if (moved) logger.warn({ topic, partition, offset }, 'partition rewound to its committed offset');
      }
      if (waiting.size === 0) this.rewindNeeded.delete(topic);
    }
  }
}

function valueBytes(topicMessages: readonly TopicMessages[]): number {
  let bytes = 0;
  for (const { messages } of topicMessages) for (const { value } of messages) bytes += value?.length ?? 0;
  return bytes;
}
