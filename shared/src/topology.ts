/**
 * Every topic the services use, with the settings it is created with, and the one call a
 * service makes at start-up to create what is missing and register the value schemas
 * (under `<topic>-value`, BACKWARD) of the topics it touches.
 */
import type { Kafka } from 'kafkajs';
import type { SchemaName, TopicNames } from '@tributary/schemas';
import type { AvroCodec } from './avro.js';
import { ensureTopics, withAdmin, type TopicSpec } from './kafka.js';
import type { Logger } from './logger.js';

export interface TopicDefinition extends TopicSpec {
  schema: SchemaName;
}

const DAY_MS = 86_400_000;

export function topicDefinitions(
  topics: TopicNames,
  options: { retryTiers?: string[]; dedupWindowMs?: number } = {},
): TopicDefinition[] {
  const dedupRetentionMs = options.dedupWindowMs ?? DAY_MS;
  const definitions: TopicDefinition[] = [
    { topic: topics.ingest, schema: 'ingest', config: { 'retention.ms': String(7 * DAY_MS) } },
    { topic: topics.ingestOverflow, schema: 'ingest', config: { 'retention.ms': String(7 * DAY_MS) } },
    // One partition keeps the config history totally ordered; it is small and read whole.
    { topic: topics.config, schema: 'config', numPartitions: 1, config: { 'cleanup.policy': 'compact', 'min.compaction.lag.ms': '0' } },
    { topic: topics.deliveries, schema: 'delivery', config: { 'retention.ms': String(7 * DAY_MS) } },
    { topic: topics.dueRetries, schema: 'delivery', config: { 'retention.ms': String(7 * DAY_MS) } },
    // Quarantined records wait for an operator, like dead letters.
    { topic: topics.quarantine, schema: 'quarantine', config: { 'retention.ms': String(30 * DAY_MS) } },
    // The delivery log's source; the indexer keeps its own retention (DELIVERY_LOG_RETENTION).
    { topic: topics.attempts, schema: 'attempt', config: { 'retention.ms': String(7 * DAY_MS) } },
    // Republished while an instance is active; a key not written for a day is stale and goes.
    {
      topic: topics.destinationHealth,
      schema: 'destination-health',
      config: { 'cleanup.policy': 'compact,delete', 'retention.ms': String(DAY_MS), 'min.compaction.lag.ms': '0' },
    },
    // Dead letters wait for an operator; keep them for a month.
    { topic: topics.deadLetters, schema: 'dlq', config: { 'retention.ms': String(30 * DAY_MS) } },
    // A replay marker must outlive the dead letter it marks (dead-letters.ts). Kafka deletes
    // whole segments, so a dead letter may stay readable up to a segment's age (7 days by
    // default) past its 30 days; markers are kept 40.
    {
      topic: topics.deadLetterReplays,
      schema: 'dlq-replay',
      config: { 'cleanup.policy': 'compact,delete', 'retention.ms': String(40 * DAY_MS) },
    },
    { topic: topics.audiences, schema: 'audiences', config: { 'cleanup.policy': 'compact' } },
    // A record per routing transaction, not per id (so not compacted), deleted past the
    // dedup window so the state stays bounded.
    {
      topic: topics.dedup,
      schema: 'dedup',
      config: { 'cleanup.policy': 'delete', 'retention.ms': String(dedupRetentionMs) },
    },
  ];
  for (const tier of new Set(options.retryTiers ?? [])) {
    // A retry waits at most the 4 h window; a week of retention covers long outages of the scheduler.
    definitions.push({ topic: topics.retry(tier), schema: 'retry', config: { 'retention.ms': String(7 * DAY_MS) } });
  }
  return definitions;
}

export interface PrepareTopicsOptions {
  kafka: Kafka;
  codec: AvroCodec;
  logger: Logger;
  definitions: TopicDefinition[];
  /** Overrides from KAFKA_TOPIC_PARTITIONS / KAFKA_REPLICATION_FACTOR. */
  numPartitions?: number | undefined;
  replicationFactor?: number | undefined;
}

export async function prepareTopics({ kafka, codec, logger, definitions, numPartitions, replicationFactor }: PrepareTopicsOptions): Promise<void> {
  const created = await withAdmin(kafka, (admin) =>
    ensureTopics(
      admin,
      definitions.map((definition) => {
        const spec: TopicSpec = { topic: definition.topic };
        const partitions = definition.numPartitions ?? numPartitions;
        if (partitions !== undefined) spec.numPartitions = partitions;
        if (replicationFactor !== undefined) spec.replicationFactor = replicationFactor;
        if (definition.config) spec.config = definition.config;
        return spec;
      }),
    ),
  );
  if (created.length > 0) logger.info({ topics: created }, 'topics created');
  await codec.registerAll(definitions.map(({ topic, schema }) => ({ topic, schema })));
}
