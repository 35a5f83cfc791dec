/**
 * The Kafka edge of one lane: a consumer (its own group) of the first-attempt topic or of the
 * retry lane, handing each record to the dispatcher as it is read.
 *
 * - Each lane waits only for its own room (records and bytes read from it and not yet
 *   settled, plus the shared bound on outcomes not yet committed), so a flood in one lane
 *   never stops the other from being read.
 * - A record that can never be decoded goes to the quarantine with its reason and the
 *   partition moves on; one that may decode later (the registry unreachable) fails the batch,
 *   and kafkajs fetches it again. One whose times no date can hold goes there too
 *   (`invalid_timestamp`, shared `deliveryTimesProblem`).
 * - Offsets are never committed here: the outcome writer commits them in its transactions,
 *   up to the lowest delivery not yet settled. kafkajs runs with `autoCommit: false` and
 *   `eachBatchAutoResolve: false`; resolved offsets only say what was read, so that a batch
 *   retried after a failure resumes behind them.
 * - Rebalance: the dispatcher is told the new assignment and drops the ledgers of partitions
 *   no longer owned; records of a partition kept across it are re-fetched from the committed
 *   offset, and those already read are skipped.
 * - A consumer that kafkajs will not restart itself is replaced (shared SupervisedConsumer),
 *   with backoff, for as long as it takes (a broker outage): the lane is unready meanwhile,
 *   the process does not exit.
 */
import { setImmediate as nextTurn } from 'node:timers/promises';
import type { EachBatchPayload, Kafka, KafkaMessage } from 'kafkajs';
import { BatchFailed, deliveryTimesProblem, SupervisedConsumer, undecodableCause, type AvroCodec, type Logger, type QuarantineCause, type Readiness } from '@tributary/shared';
import type { Delivery, DeliveryLane } from '@tributary/schemas';
import type { PartitionLedger } from './ledger.js';

/**
 * Longest stretch of batch processing without yielding to the event loop: decoding and
 * admitting are synchronous once schemas are cached, and a large batch would otherwise hold
 * back the HTTP answers of running attempts.
 */
const MAX_SLICE_MS = 5;
/** How often a lane waiting for room re-checks and heartbeats. */
const WAIT_TICK_MS = 100;
/** kafkajs hands batches of this many partitions to `eachBatch` at once. */
const PARTITIONS_CONSUMED_CONCURRENTLY = 8;

export interface LaneHandler {
  hasRoom(lane: DeliveryLane): boolean;
  /** Resolves when the lane may have room again (room-waits.ts), or after `timeoutMs`. */
  waitForRoom(lane: DeliveryLane, timeoutMs: number): Promise<void>;
  /** The ledger of a partition now owned, created on its first record. */
  ledger(lane: DeliveryLane, partition: number, firstOffset: bigint): PartitionLedger;
  isCurrent(lane: DeliveryLane, ledger: PartitionLedger): boolean;
  accept(lane: DeliveryLane, ledger: PartitionLedger, offset: bigint, message: KafkaMessage, delivery: Delivery): void;
  quarantine(lane: DeliveryLane, ledger: PartitionLedger, offset: bigint, message: KafkaMessage, cause: QuarantineCause): void;
  assigned(lane: DeliveryLane, partitions: number[]): void;
}

export interface LaneReaderOptions {
  kafka: Kafka;
  codec: AvroCodec;
  lane: DeliveryLane;
  topic: string;
  groupId: string;
  sessionTimeoutMs: number;
  handler: LaneHandler;
  logger: Logger;
  readiness: Readiness;
}

export class LaneReader {
  private consumer: SupervisedConsumer | undefined;
  private stopping = false;

  constructor(private readonly options: LaneReaderOptions) {}

  async start(): Promise<void> {
    const { kafka, topic, groupId, lane, handler, logger, readiness, sessionTimeoutMs } = this.options;
    this.consumer = new SupervisedConsumer({
      kafka,
      groupId,
      config: { sessionTimeout: sessionTimeoutMs, heartbeatInterval: Math.min(3_000, Math.floor(sessionTimeoutMs / 3)) },
      logger,
      name: `${lane} lane`,
      readiness,
      // What the crashed consumer read stays unsettled or staged; the new one starts from the
      // committed offsets, so the lane's ledgers start afresh.
      onReplace: () => handler.assigned(lane, []),
      setup: async (consumer) => {
        consumer.on(consumer.events.GROUP_JOIN, ({ payload }) => handler.assigned(lane, payload.memberAssignment[topic] ?? []));
        // A new group starts at the beginning: deliveries written before the first start are still due.
        await consumer.subscribe({ topic, fromBeginning: true });
        await consumer.run({
          autoCommit: false,
          eachBatchAutoResolve: false,
          partitionsConsumedConcurrently: PARTITIONS_CONSUMED_CONCURRENTLY,
          eachBatch: (payload) => this.onBatch(payload),
        });
      },
    });
    await this.consumer.start();
  }

  /** Stops fetching; what was read stays with the dispatcher. */
  pause(): void {
    this.stopping = true;
    this.consumer?.pause([{ topic: this.options.topic }]);
  }

  async stop(): Promise<void> {
    this.stopping = true;
    await this.consumer?.stop();
    this.consumer = undefined;
  }

  private async onBatch({ batch, resolveOffset, heartbeat, isRunning, isStale }: EachBatchPayload): Promise<void> {
    const { handler, lane, codec, topic } = this.options;
    const { partition } = batch;
    const first = batch.messages[0];
    if (!first) return;
    const ledger = handler.ledger(lane, partition, BigInt(first.offset));
    // kafkajs's isStale() looks the partition up in its seek map by a composed string key: per
    // record it was 2 % of the dispatcher at the maximum rate. It is asked at each slice and
    // after each wait instead; a seek noticed a few records late only means records read again
    // later, and the ledger skips those it already holds.
    let stale = false;
    const stillOwned = () => !this.stopping && !stale && isRunning() && handler.isCurrent(lane, ledger);
    const checkStale = () => {
      stale ||= isStale();
    };
    let sliceStart = performance.now();
    checkStale();
    for (const message of batch.messages) {
      if (performance.now() - sliceStart > MAX_SLICE_MS) {
        await nextTurn();
        sliceStart = performance.now();
        checkStale();
      }
      if (!stillOwned()) return;
      const offset = BigInt(message.offset);
      if (ledger.hasRead(offset)) {
        resolveOffset(message.offset);
        continue;
      }
      while (!handler.hasRoom(lane)) {
        if (!stillOwned()) return;
        await handler.waitForRoom(lane, WAIT_TICK_MS);
        await heartbeat();
        sliceStart = performance.now();
        checkStale();
      }
      let delivery: Delivery;
      try {
        delivery = await codec.decode<Delivery>('delivery', message.value);
      } catch (error) {
        const cause = undecodableCause(error);
        if (!cause) throw new BatchFailed('dispatching', topic, partition, error);
        if (!stillOwned()) return;
        handler.quarantine(lane, ledger, offset, message, cause);
        resolveOffset(message.offset);
        continue;
      }
      // Shutdown or a revocation may have begun during the decode.
      if (!stillOwned()) return;
      const badTime = deliveryTimesProblem(delivery);
      if (badTime !== undefined) {
        handler.quarantine(lane, ledger, offset, message, { reason: 'invalid_timestamp', error: badTime });
        resolveOffset(message.offset);
        continue;
      }
      handler.accept(lane, ledger, offset, message, delivery);
      resolveOffset(message.offset);
    }
    // Transaction markers after the last record move the commit point too.
    ledger.readUpTo(BigInt(batch.lastOffset()));
  }
}
