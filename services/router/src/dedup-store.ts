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
import { planRetention } from './dedup-retention.js';
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
    await this.keepRetentionWithinWindow();
    await this.reader.start();
    this.caughtUp = Promise.resolve();
  }

  /**
   * The topic's retention must cover DEDUP_WINDOW, or a restart forgets ids inside it. Every
   * service creates missing topics at start, and only the router knows the window, so the
   * topic is often created by another service with the default 24 h; and a window raised
   * later finds the topic as it was. Its retention is raised here (never lowered: a longer
   * one costs only disk). Kafka's AlterConfigs (the only one kafkajs speaks) replaces all of a
   * topic's own settings, so the ones it has are sent back with it.
   */
  private async keepRetentionWithinWindow(): Promise<void> {
    const { kafka, topic, windowMs, logger } = this.options;
    try {
      await withAdmin(kafka, async (admin) => {
        const described = await admin.describeConfigs({ includeSynonyms: false, resources: [{ type: ConfigResourceTypes.TOPIC, name: topic }] });
        const entries = described.resources[0]?.configEntries ?? [];
        const plan = planRetention(entries, windowMs);
        if (plan === undefined) return;
        await admin.alterConfigs({ validateOnly: false, resources: [{ type: ConfigResourceTypes.TOPIC, name: topic, configEntries: plan.topicConfig }] });
        logger.info({ topic, retentionMs: plan.fromMs, windowMs }, 'raised the dedup topic\'s retention to DEDUP_WINDOW');
      });
    } catch (error) {
      logger.warn(
        { err: error, topic, windowMs },
        'could not check or raise the dedup topic\'s retention to DEDUP_WINDOW: if it is shorter, a restart forgets ids older than it; raise its retention.ms',
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
