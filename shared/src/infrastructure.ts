/**
 * The start-up step every service shares: a Kafka client, an Avro codec bound to the
 * registry, and the topics it touches created and their schemas registered.
 */
import type { Kafka } from 'kafkajs';
import { topicNames, type TopicNames } from '@tributary/schemas';
import { AvroCodec } from './avro.js';
import type { CommonEnv } from './env.js';
import { createKafka } from './kafka.js';
import type { ServiceContext } from './lifecycle.js';
import { prepareTopics, type TopicDefinition } from './topology.js';

export interface Infrastructure {
  kafka: Kafka;
  codec: AvroCodec;
  topics: TopicNames;
}

export async function connectInfrastructure<E extends CommonEnv>(
  context: ServiceContext<E>,
  definitionsFor: (topics: TopicNames) => TopicDefinition[],
): Promise<Infrastructure> {
  const { env, logger, name } = context;
  const topics = topicNames(env.TOPIC_NAMESPACE);
  const kafka = createKafka({ brokers: env.KAFKA_BROKERS, clientId: env.KAFKA_CLIENT_ID ?? `tributary-${name}`, logger });
  const codec = new AvroCodec({ registryUrl: env.SCHEMA_REGISTRY_URL, logger });
  await prepareTopics({
    kafka,
    codec,
    logger,
    definitions: definitionsFor(topics),
    numPartitions: env.KAFKA_TOPIC_PARTITIONS,
    replicationFactor: env.KAFKA_REPLICATION_FACTOR,
  });
  return { kafka, codec, topics };
}
