/**
 * The Kafka side of a retry-scheduler test, in the test's own namespace: writes retry
 * records to tier topics the way the dispatcher does, and reads back what the scheduler
 * released (deliveries) and expired (dead letters) with read_committed, each with the
 * timestamp Kafka stored for it — set by the scheduler's producer when it sent the record,
 * which is never before the scheduler decided the record was due.
 */
import type { Kafka, Producer } from 'kafkajs';
import { destinationHealthKey, topicNames, type DeadLetter, type DeliveryAttempt, type DestinationHealth, type QuarantinedRecord, type Delivery, type RetryRecord, type TopicNames } from '@tributary/schemas';
import { createProducer, ladderTiers, prepareTopics, topicDefinitions, withAdmin, type AvroCodec, type RetryLadder } from '@tributary/shared';
import { ladderEnv, readTopicToEnd, stackEnv, testCodec, testDelivery, testKafka, testLogger, type ConsumedRecord } from '@tributary/test/harness';

export interface Written<T> {
  key: string;
  value: T;
  /** Kafka's CreateTime of the record (ms). */
  timestamp: number;
  partition: number;
}

/**
 * What a read waits for (see `readAll`): a condition on the records read so far, such as
 * `holding(keys)`.
 */
export type Until<T> = (written: Array<Written<T>>) => boolean;

/** An `Until`: a record of each of `keys` has been read. */
export function holding(keys: string[]): Until<unknown> {
  return (written) => {
    const read = new Set(written.map(({ key }) => key));
    return keys.every((key) => read.has(key));
  };
}

export class TierStack {
  readonly topics: TopicNames;
  readonly kafka: Kafka;
  readonly codec: AvroCodec;
  private producer: Producer | undefined;

  constructor(
    readonly namespace: string,
    readonly ladder: RetryLadder,
  ) {
    this.topics = topicNames(namespace);
    this.kafka = testKafka(`retry-test-${namespace}`);
    this.codec = testCodec();
  }

  get tiers(): string[] {
    return ladderTiers(this.ladder).map((tier) => tier.label);
  }

  /** Env for the scheduler under test: the stack, this namespace and this ladder. */
  env(extra: Record<string, string> = {}): Record<string, string> {
    return {
      ...stackEnv(this.namespace),
      ...ladderEnv(this.ladder),
      ...extra,
    };
  }

  async open(): Promise<void> {
    await prepareTopics({
      kafka: this.kafka,
      codec: this.codec,
      logger: testLogger(),
      definitions: topicDefinitions(this.topics, { retryTiers: this.tiers }),
      numPartitions: Number(stackEnv().KAFKA_TOPIC_PARTITIONS),
    });
    this.producer = createProducer(this.kafka);
    await this.producer.connect();
  }

  async close(): Promise<void> {
    await this.producer?.disconnect();
  }

  /** Writes retry records to their tier topics, keyed as the dispatcher keys them. */
  async writeRetries(records: RetryRecord[]): Promise<void> {
    const producer = this.producer;
    if (!producer) throw new Error('open() first');
    for (let start = 0; start < records.length; start += 500) {
      const chunk = records.slice(start, start + 500);
      const byTopic = new Map<string, Array<{ key: string; value: Buffer }>>();
      for (const record of chunk) {
        const topic = this.topics.retry(record.tier);
        const messages = byTopic.get(topic) ?? [];
        messages.push({ key: record.delivery.deliveryId, value: this.codec.encode(topic, record) });
        byTopic.set(topic, messages);
      }
      await producer.sendBatch({ topicMessages: [...byTopic].map(([topic, messages]) => ({ topic, messages })) });
    }
  }

  /** Publishes a dispatcher's view of a destination, as the dispatcher does. */
  async writeHealth(view: DestinationHealth): Promise<void> {
    const key = destinationHealthKey(view.destinationId, view.instanceId);
    await this.producer?.send({ topic: this.topics.destinationHealth, messages: [{ key, value: this.codec.encode(this.topics.destinationHealth, view) }] });
  }

  /** Every committed delivery-log record. */
  async attempts(until?: Until<DeliveryAttempt>): Promise<Array<Written<DeliveryAttempt>>> {
    return this.readAll(this.topics.attempts, (value) => this.codec.decode<DeliveryAttempt>('attempt', value), until);
  }

  /** Every committed record of a tier topic. */
  async retries(tier: string, until?: Until<RetryRecord>): Promise<Array<Written<RetryRecord>>> {
    return this.readAll(this.topics.retry(tier), (value) => this.codec.decode<RetryRecord>('retry', value), until);
  }

  /** Writes bytes that are not Confluent-framed Avro to a tier topic. */
  async writeGarbage(tier: string, key: string): Promise<void> {
    await this.producer?.send({ topic: this.topics.retry(tier), messages: [{ key, value: Buffer.from('not avro') }] });
  }

  /** Every committed delivery record (duplicates included). */
  async deliveries(until?: Until<Delivery>): Promise<Array<Written<Delivery>>> {
    return this.readAll(this.topics.dueRetries, (value) => this.codec.decode<Delivery>('delivery', value), until);
  }

  async quarantined(until?: Until<QuarantinedRecord>): Promise<Array<Written<QuarantinedRecord>>> {
    return this.readAll(this.topics.quarantine, (value) => this.codec.decode<QuarantinedRecord>('quarantine', value), until);
  }

  async deadLetters(until?: Until<DeadLetter>): Promise<Array<Written<DeadLetter>>> {
    return this.readAll(this.topics.deadLetters, (value) => this.codec.decode<DeadLetter>('dlq', value), until);
  }

  /** Offsets (records and transaction markers) on the deliveries topic so far. */
  async deliveryOffsets(): Promise<number> {
    const offsets = await withAdmin(this.kafka, (admin) => admin.fetchTopicOffsets(this.topics.dueRetries));
    return offsets.reduce((sum, { high }) => sum + Number(high), 0);
  }

  /**
   * The topic read to its committed end. With `until`, the read goes on until it holds: the
   * scheduler counts what a transaction did once its commit has answered, and the broker writes
   * the commit markers after that, so a read made at once may end before them.
   */
  private async readAll<T>(topic: string, decode: (value: Buffer) => Promise<T>, until?: Until<T>): Promise<Array<Written<T>>> {
    const written: Array<Written<T>> = [];
    let decoded = 0;
    const collect = async (records: ConsumedRecord[]): Promise<boolean> => {
      for (; decoded < records.length; decoded++) {
        const { partition, message } = records[decoded]!;
        if (!message.value) continue;
        written.push({ key: message.key?.toString() ?? '', value: await decode(message.value), timestamp: Number(message.timestamp), partition });
      }
      return until?.(written) ?? true;
    };
    await collect(await readTopicToEnd(this.kafka, topic, { timeoutMs: 60_000, ...(until ? { until: collect } : {}) }));
    return written;
  }
}

let sequence = 0;

/** A retry record as the dispatcher writes it after `attempts` failed attempts. */
export function retryRecord(tier: string, dueAt: number, options: { firstAttemptAt?: number | null; attempts?: number; destinationId?: string } = {}): RetryRecord {
  const messageId = `m-${process.pid}-${++sequence}`;
  const destinationId = options.destinationId ?? 'hooks';
  const firstAttemptAt = options.firstAttemptAt === undefined ? dueAt - 1_000 : options.firstAttemptAt;
  const delivery = testDelivery(destinationId, messageId, {
    body: Buffer.from(JSON.stringify({ version: 1, type: 'track', messageId, event: 'Retried' })),
    receivedAt: (firstAttemptAt ?? dueAt) - 50,
    routedAt: (firstAttemptAt ?? dueAt) - 40,
    attempts: options.attempts ?? 1,
    firstAttemptAt,
    lastError: 'HTTP 503',
    lastStatus: 503,
  });
  return { delivery, dueAt, tier };
}

