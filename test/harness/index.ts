/**
 * Helpers for integration tests against the real broker and registry. Tests isolate
 * themselves by unique topic and group names rather than by restarting Kafka.
 */
import { randomUUID } from 'node:crypto';
import { inject } from 'vitest';
import './provided.js';
import type { Kafka, KafkaMessage } from 'kafkajs';
import { AvroCodec, createConsumer, createKafka, createLogger, ensureTopics, SHORT_READER_WAIT_MS, withAdmin, type Logger, type RetryLadder } from '@tributary/shared';

export interface StackEndpoints {
  brokers: string[];
  registryUrl: string;
}

export function stackEndpoints(): StackEndpoints {
  return { brokers: inject('kafkaBrokers'), registryUrl: inject('schemaRegistryUrl') };
}

/**
 * The environment a service under test needs to reach the stack, in its own namespace.
 * Test topics get 2 partitions: enough to exercise partitioning, few enough that many
 * test namespaces do not weigh on a single small broker.
 */
export function stackEnv(namespace?: string): Record<string, string> {
  const { brokers, registryUrl } = stackEndpoints();
  const env: Record<string, string> = {
    KAFKA_BROKERS: brokers.join(','),
    SCHEMA_REGISTRY_URL: registryUrl,
    KAFKA_TOPIC_PARTITIONS: '2',
  };
  if (namespace) env.TOPIC_NAMESPACE = namespace;
  return env;
}

/** The env that sets a service's retry ladder and window (RETRY_LADDER, RETRY_WINDOW). */
export function ladderEnv(ladder: RetryLadder): Record<string, string> {
  return { RETRY_LADDER: ladder.delaysMs.map((ms) => `${ms}ms`).join(','), RETRY_WINDOW: `${ladder.windowMs}ms` };
}

export function uniqueName(prefix: string): string {
  return `${prefix}.${Date.now().toString(36)}.${randomUUID().slice(0, 8)}`;
}

/**
 * A fresh TOPIC_NAMESPACE: services started with it use their own topics and consumer
 * groups, so a test sees only its own traffic on the shared broker.
 */
export function uniqueNamespace(prefix = 't'): string {
  return `${prefix}-${Date.now().toString(36)}-${randomUUID().slice(0, 6)}`.toLowerCase();
}

export function testLogger(name = 'test'): Logger {
  return createLogger({ service: name, level: process.env.TEST_LOG_LEVEL ?? 'warn' });
}

export function testKafka(clientId = 'tributary-test'): Kafka {
  return createKafka({ brokers: stackEndpoints().brokers, clientId, logger: testLogger(clientId) });
}

export function testCodec(): AvroCodec {
  return new AvroCodec({ registryUrl: stackEndpoints().registryUrl, logger: testLogger('avro') });
}

export async function createTopics(kafka: Kafka, topics: string[], numPartitions = 3): Promise<void> {
  await withAdmin(kafka, (admin) => ensureTopics(admin, topics.map((topic) => ({ topic, numPartitions }))));
}

export interface ConsumedRecord {
  topic: string;
  partition: number;
  message: KafkaMessage;
}

/**
 * Reads a topic from the beginning until `until` is satisfied or `timeoutMs` passes,
 * and returns what was read. Uses its own group so it never disturbs the services.
 */
export async function readTopic(
  kafka: Kafka,
  topic: string,
  options: { until: (records: ConsumedRecord[]) => boolean; timeoutMs?: number; readCommitted?: boolean },
): Promise<ConsumedRecord[]> {
  const consumer = createConsumer(kafka, uniqueName('test-reader'), {
    readUncommitted: !(options.readCommitted ?? true),
    maxWaitTimeInMs: SHORT_READER_WAIT_MS,
  });
  const records: ConsumedRecord[] = [];
  await consumer.connect();
  try {
    await consumer.subscribe({ topic, fromBeginning: true });
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => resolve(), options.timeoutMs ?? 15_000);
      consumer
        .run({
          autoCommit: false,
          eachMessage: async ({ topic: from, partition, message }) => {
            records.push({ topic: from, partition, message });
            if (options.until(records)) {
              clearTimeout(timer);
              resolve();
            }
          },
        })
        .catch(reject);
      if (options.until(records)) {
        clearTimeout(timer);
        resolve();
      }
    });
  } finally {
    await consumer.disconnect();
  }
  return records;
}
export * from './services.js';
export * from './read-to-end.js';
export * from './tail.js';
export * from './metrics.js';
export * from './promise-state.js';
export * from './eventually.js';
export * from './deliveries.js';
export * from './admin.js';
export * from './openapi.js';
