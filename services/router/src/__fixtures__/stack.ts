/**
 * Integration-test helpers for the router: a namespace's topics on the real broker and
 * registry, config and ingest records written the way the admin API and producers write
 * them, and a watcher that reads every committed delivery record.
 */
import type { Kafka, Producer } from 'kafkajs';
import { topicNames, type ConfigEntry, type Delivery, type Destination, type IngestMessage, type Source, type TopicNames } from '@tributary/schemas';
import { CompactedTopicReader, configKey, createProducer, prepareTopics, topicDefinitions, type AvroCodec } from '@tributary/shared';
import { stackEnv, testCodec, testKafka, testLogger } from '@tributary/test/harness';

export interface Stack {
  kafka: Kafka;
  codec: AvroCodec;
  topics: TopicNames;
  producer: Producer;
  close(): Promise<void>;
}

/** Creates the namespace's topics (2 partitions, as `stackEnv` gives services) and a producer. */
export async function openStack(namespace: string): Promise<Stack> {
  const kafka = testKafka(`router-test-${namespace}`);
  const codec = testCodec();
  const topics = topicNames(namespace);
  await prepareTopics({ kafka, codec, logger: testLogger(), definitions: topicDefinitions(topics), numPartitions: Number(stackEnv().KAFKA_TOPIC_PARTITIONS) });
  const producer = createProducer(kafka);
  await producer.connect();
  return { kafka, codec, topics, producer, close: () => producer.disconnect() };
}

export async function writeConfig(stack: Stack, entity: Source | Destination): Promise<void> {
  const kind = 'settings' in entity ? 'destination' : 'source';
  const entry: ConfigEntry = { entity, updatedAt: Date.now() };
  await stack.producer.send({
    topic: stack.topics.config,
    messages: [{ key: configKey(kind, entity.id), value: stack.codec.encode(stack.topics.config, entry) }],
  });
}

export function source(id: string, overrides: Partial<Source> = {}): Source {
  return { id, name: id, writeKey: `wk_${id}_0123456789`, enabled: true, ...overrides };
}

export function destination(id: string, sources: string[], overrides: Partial<Destination> = {}): Destination {
  return {
    id,
    name: id,
    type: 'webhooks',
    sources,
    enabled: true,
    settings: { sharedSecret: 'not-logged', standardWebhooksSecret: null, webhooks: [{ url: 'https://hooks.example.com/in', headers: {} }] },
    ...overrides,
  };
}

/** Ingest records keyed as ingest keys them (anonymousId, else userId). */
export async function produceIngest(stack: Stack, messages: IngestMessage[]): Promise<void> {
  await stack.producer.send({
    topic: stack.topics.ingest,
    messages: messages.map((message) => ({ key: message.anonymousId ?? message.userId, value: stack.codec.encode(stack.topics.ingest, message) })),
  });
}

export function trackMessage(messageId: string, overrides: Partial<IngestMessage> = {}): IngestMessage {
  const now = Date.now();
  return {
    messageId,
    type: 'track',
    sourceId: 'web',
    userId: 'user-1',
    anonymousId: 'anon-1',
    timestamp: now,
    originalTimestamp: null,
    sentAt: null,
    receivedAt: now,
    event: 'Tested',
    name: null,
    category: null,
    groupId: null,
    previousId: null,
    properties: '{"n":1}',
    traits: null,
    context: '{}',
    integrations: null,
    ...overrides,
  };
}

export interface SeenDelivery {
  key: string;
  delivery: Delivery;
}

/**
 * Reads every committed record of the deliveries topic (duplicates included, nothing
 * collapsed) — or of another topic of delivery records: the retry lane.
 */
export class DeliveryWatcher {
  readonly seen: SeenDelivery[] = [];
  private readonly reader: CompactedTopicReader<Delivery>;
  private readonly listeners = new Set<() => void>();

  constructor(stack: Stack, topic = stack.topics.deliveries) {
    this.reader = new CompactedTopicReader<Delivery>({
      kafka: stack.kafka,
      topic,
      logger: testLogger(),
      decode: (value) => stack.codec.decode<Delivery>('delivery', value),
      groupPrefix: `${stack.topics.namespace}-test`,
      materialize: false,
    });
    this.reader.onChange((key, delivery) => {
      if (delivery) this.seen.push({ key, delivery });
      for (const listener of this.listeners) listener();
    });
  }

  start(): Promise<void> {
    return this.reader.start();
  }

  stop(): Promise<void> {
    return this.reader.stop();
  }

  keys(): string[] {
    return this.seen.map(({ key }) => key);
  }

  has(key: string): boolean {
    return this.seen.some((seen) => seen.key === key);
  }

  /** Resolves once `predicate` holds for what has been read. */
  waitFor(predicate: () => boolean, timeoutMs = 20_000, what = 'deliveries'): Promise<void> {
    if (predicate()) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.listeners.delete(check);
        reject(new Error(`timed out after ${timeoutMs} ms waiting for ${what}; seen ${this.seen.length} records`));
      }, timeoutMs);
      const check = () => {
        if (!predicate()) return;
        clearTimeout(timer);
        this.listeners.delete(check);
        resolve();
      };
      this.listeners.add(check);
    });
  }

  waitForKeys(keys: string[], timeoutMs?: number): Promise<void> {
    return this.waitFor(() => keys.every((key) => this.has(key)), timeoutMs, keys.join(', '));
  }

  /** Everything committed so far has been read (so an absent key is really absent). */
  settle(): Promise<void> {
    return this.reader.catchUpToEnd();
  }
}

