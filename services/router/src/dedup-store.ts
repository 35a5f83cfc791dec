/**
 * The dedup state kept in step with the dedup topic. Every router instance reads the
 * whole topic (read_committed, so records of aborted transactions never count) into a
 * bounded `DedupState`, and follows it: ids other instances commit arrive here too. Each
 * record lists the ids of one routing transaction, so reading it back costs a record per
 * transaction, not per message.
 *
 * `start()` resolves once the topic has been read to its end. `ready()` is awaited
 * before routing each batch; after `invalidate()` — called when the consumer group hands
 * this instance its partitions — it first catches up with the topic's end again, so
 * what the previous owner of a partition committed is known before its next message is
 * routed here.
 */
import kafkajs, { type Kafka } from 'kafkajs';
import type { DedupBatch } from '@tributary/schemas';
import { CompactedTopicReader, withAdmin, type AvroCodec, type Logger } from '@tributary/shared';
import { DedupState, type DedupClaims, type DedupOptions } from './dedup.js';

// kafkajs is CommonJS and Node cannot see this enum as a named export.
const { ConfigResourceTypes } = kafkajs;

export interface DedupStoreOptions extends DedupOptions {
  kafka: Kafka;
  codec: AvroCodec;
  logger: Logger;
  topic: string;
  groupPrefix: string;
}

export class DedupStore {
  readonly state: DedupState;
  private readonly reader: CompactedTopicReader<DedupBatch>;
  private caughtUp: Promise<void> | undefined;

  constructor(private readonly options: DedupStoreOptions) {
    const { windowMs, maxEntries, maxBytes, onCapacityEviction } = options;
    this.state = new DedupState({ windowMs, maxEntries, maxBytes, ...(onCapacityEviction ? { onCapacityEviction } : {}) });
    this.reader = new CompactedTopicReader<DedupBatch>({
      kafka: options.kafka,
      topic: options.topic,
      logger: options.logger,
      decode: (value) => options.codec.decode<DedupBatch>('dedup', value),
      groupPrefix: options.groupPrefix,
      materialize: false,
    });
    this.reader.onChange((_recordKey, batch) => {
      if (!batch) return;
      const now = Date.now();
      for (const key of batch.keys) this.state.remember(key, batch.firstSeenAt, now);
    });
  }

  async start(): Promise<void> {
    await this.warnIfRetentionShort();
    await this.reader.start();
    this.caughtUp = Promise.resolve();
  }

  /**
   * The topic's retention is set from DEDUP_WINDOW only when the topic is created (by the
   * first service to start); a shorter one makes restarts forget ids inside the window.
   */
  private async warnIfRetentionShort(): Promise<void> {
    const { kafka, topic, windowMs, logger } = this.options;
    const described = await withAdmin(kafka, (admin) =>
      admin.describeConfigs({ includeSynonyms: false, resources: [{ type: ConfigResourceTypes.TOPIC, name: topic, configNames: ['retention.ms'] }] }),
    );
    const retention = described.resources[0]?.configEntries.find((entry) => entry.configName === 'retention.ms')?.configValue;
    const retentionMs = Number(retention);
    if (retention !== undefined && retentionMs >= 0 && retentionMs < windowMs) {
      logger.warn(
        { topic, retentionMs, windowMs },
        'the dedup topic keeps entries for less than DEDUP_WINDOW: after a restart, ids older than its retention are forgotten; raise its retention.ms',
      );
    }
  }

  stop(): Promise<void> {
    return this.reader.stop();
  }

  invalidate(): void {
    this.caughtUp = undefined;
  }

  ready(): Promise<void> {
    if (this.caughtUp === undefined) {
      const catchUp = this.reader.catchUpToEnd();
      // A failed catch-up is tried again by the next caller instead of failing for good.
      catchUp.catch(() => {
        if (this.caughtUp === catchUp) this.caughtUp = undefined;
      });
      this.caughtUp = catchUp;
    }
    return this.caughtUp;
  }

  /** Claims for one chunk, after dropping what has left the window. */
  claims(): DedupClaims {
    const now = Date.now();
    this.state.evictExpired(now);
    return this.state.claims(now);
  }
}
