/**
 * The Kafka side of a dispatcher integration test, in the test's own namespace: creates
 * the topics, writes destinations to the config topic and deliveries to the deliveries
 * topic the way the router does, and collects every retry record and dead letter the
 * dispatcher writes.
 */
import { randomUUID } from 'node:crypto';
import type { Consumer, Kafka, Producer } from 'kafkajs';
import {
  chunkMessages,
  configKey,
  createConsumer,
  createProducer,
  ladderTiers,
  prepareTopics,
  topicDefinitions,
  type AvroCodec,
  type RetryLadder,
} from '@tributary/shared';
import {
  topicNames,
  type DeadLetter,
  type Delivery,
  type DeliveryAttempt,
  type Destination,
  type DestinationHealth,
  type QuarantinedRecord,
  type RetryRecord,
  type TopicNames,
} from '@tributary/schemas';
import { ladderEnv, stackEnv, testDelivery, testCodec, testKafka, testLogger, uniqueName } from '@tributary/test/harness';

export interface Collected<T> {
  value: T;
  key: string;
  topic: string;
}

export class TestPipeline {
  readonly topics: TopicNames;
  readonly kafka: Kafka;
  readonly codec: AvroCodec;
  readonly retries: Array<Collected<RetryRecord>> = [];
  readonly deadLetters: Array<Collected<DeadLetter>> = [];
  readonly attempts: Array<Collected<DeliveryAttempt>> = [];
  readonly quarantined: Array<Collected<QuarantinedRecord>> = [];
  readonly health: Array<Collected<DestinationHealth | null>> = [];
  private producer: Producer | undefined;
  private collector: Consumer | undefined;

  constructor(
    readonly namespace: string,
    readonly ladder: RetryLadder,
  ) {
    this.topics = topicNames(namespace);
    this.kafka = testKafka(`dispatcher-test-${namespace}`);
    this.codec = testCodec();
  }

  /** Env for the dispatcher under test: the stack, this namespace and this ladder. */
  env(extra: Record<string, string> = {}): Record<string, string> {
    return {
      ...stackEnv(this.namespace),
      ...ladderEnv(this.ladder),
      ...extra,
    };
  }

  /** `readUncommitted`: also collect records of transactions that were never committed. */
  async start(options: { readUncommitted?: boolean } = {}): Promise<void> {
    const retryTiers = ladderTiers(this.ladder).map((tier) => tier.label);
    await prepareTopics({
      kafka: this.kafka,
      codec: this.codec,
      logger: testLogger(),
      definitions: topicDefinitions(this.topics, { retryTiers }),
      numPartitions: 2,
    });
    this.producer = createProducer(this.kafka);
    await this.producer.connect();
    const collector = createConsumer(this.kafka, uniqueName(`${this.namespace}-collector`), { readUncommitted: options.readUncommitted ?? false });
    this.collector = collector;
    await collector.connect();
    const tierTopics = retryTiers.map((tier) => this.topics.retry(tier));
    const { deadLetters, attempts, quarantine, destinationHealth } = this.topics;
    await collector.subscribe({ topics: [deadLetters, attempts, quarantine, destinationHealth, ...tierTopics], fromBeginning: true });
    await collector.run({
      eachMessage: async ({ topic, message }) => {
        const key = message.key?.toString() ?? '';
        if (topic === destinationHealth) {
          this.health.push({ topic, key, value: message.value ? await this.codec.decode<DestinationHealth>('destination-health', message.value) : null });
          return;
        }
        if (!message.value) return;
        if (topic === deadLetters) this.deadLetters.push({ topic, key, value: await this.codec.decode<DeadLetter>('dlq', message.value) });
        else if (topic === attempts) this.attempts.push({ topic, key, value: await this.codec.decode<DeliveryAttempt>('attempt', message.value) });
        else if (topic === quarantine) this.quarantined.push({ topic, key, value: await this.codec.decode<QuarantinedRecord>('quarantine', message.value) });
        else this.retries.push({ topic, key, value: await this.codec.decode<RetryRecord>('retry', message.value) });
      },
    });
  }

  async stop(): Promise<void> {
    await this.collector?.disconnect();
    await this.producer?.disconnect();
  }

  async putDestination(destination: Destination): Promise<void> {
    await this.send(this.topics.config, configKey('destination', destination.id), this.codec.encode(this.topics.config, { entity: destination, updatedAt: Date.now() }));
  }

  async deleteDestination(id: string): Promise<void> {
    await this.send(this.topics.config, configKey('destination', id), null);
  }

  /** Writes a delivery as the router would (key `<destination>/<source>/<message>`); returns it. */
  async deliver(destinationId: string, body: unknown, overrides: Partial<Delivery> = {}): Promise<Delivery> {
    const [delivery] = await this.deliverMany([{ destinationId, body, overrides }]);
    return delivery!;
  }

  /** Writes deliveries to the first-attempt topic, or with `lane: 'retry'` to the retry lane (as the retry-scheduler releases them). */
  async deliverMany(items: Array<{ destinationId: string; body: unknown; overrides?: Partial<Delivery> }>, lane: 'first' | 'retry' = 'first'): Promise<Delivery[]> {
    const deliveries = items.map(({ destinationId, body, overrides }) => newDelivery(destinationId, body, overrides));
    const messages = deliveries.map((delivery) => ({ key: delivery.deliveryId, value: this.codec.encode(this.topics.deliveries, delivery) }));
    for (const chunk of chunkMessages(messages)) {
      await this.requireProducer().send({ topic: lane === 'first' ? this.topics.deliveries : this.topics.dueRetries, messages: chunk });
    }
    return deliveries;
  }

  retriesFor(deliveryId: string): RetryRecord[] {
    return this.retries.filter(({ value }) => value.delivery.deliveryId === deliveryId).map(({ value }) => value);
  }

  attemptsFor(deliveryId: string): DeliveryAttempt[] {
    return this.attempts.filter(({ value }) => value.deliveryId === deliveryId).map(({ value }) => value);
  }

  /** Writes raw bytes (poison) to a topic. */
  async sendRaw(topic: string, key: string, value: Buffer | null): Promise<void> {
    await this.send(topic, key, value);
  }

  deadLettersFor(deliveryId: string): DeadLetter[] {
    return this.deadLetters.filter(({ value }) => value.delivery.deliveryId === deliveryId).map(({ value }) => value);
  }

  private async send(topic: string, key: string, value: Buffer | null): Promise<void> {
    await this.requireProducer().send({ topic, messages: [{ key, value }] });
  }

  private requireProducer(): Producer {
    if (!this.producer) throw new Error('TestPipeline.start() first');
    return this.producer;
  }
}

/** A first-attempt delivery; a body that is not a Buffer is rendered with JSON.stringify, like the router does. */
export function newDelivery(destinationId: string, body: unknown, { messageId = randomUUID(), ...overrides }: Partial<Omit<Delivery, 'deliveryId' | 'destinationId'>> = {}): Delivery {
  return testDelivery(destinationId, messageId, { body: Buffer.isBuffer(body) ? body : Buffer.from(JSON.stringify(body), 'utf8'), ...overrides });
}

export function webhooksDestination(id: string, webhooks: Array<{ url: string; headers?: Record<string, string> }>, settings: Partial<Destination['settings']> = {}): Destination {
  return {
    id,
    name: id,
    type: 'webhooks',
    sources: ['web'],
    enabled: true,
    settings: {
      sharedSecret: null,
      standardWebhooksSecret: null,
      ...settings,
      webhooks: webhooks.map((entry) => ({ url: entry.url, headers: entry.headers ?? {} })),
    },
  };
}

export { eventually } from '@tributary/test/harness';

