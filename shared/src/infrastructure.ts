/**
 * The start-up step every service shares: a Kafka client, an Avro codec bound to the
 * registry, and the topics it touches created and their schemas registered.
 *
 * In two steps, so a service can serve /healthz and /readyz while it waits for Kafka and the
 * registry: `createInfrastructure` needs neither, `prepareInfrastructure` waits for both (a
 * service started during an outage keeps trying, unready, rather than exiting).
 */
import type { Kafka } from 'kafkajs';
import { topicNames, type TopicNames } from '@tributary/schemas';
import { AvroCodec } from './avro.js';
import type { CommonEnv } from './env.js';
import { createKafka } from './kafka.js';
import type { ServiceContext } from './lifecycle.js';
import { untilSuccess } from './patience.js';
import { prepareTopics, type TopicDefinition } from './topology.js';

export interface Infrastructure {
  kafka: Kafka;
  codec: AvroCodec;
  topics: TopicNames;
}

export function createInfrastructure<E extends CommonEnv>(context: ServiceContext<E>): Infrastructure {
  const { env, logger, name } = context;
  const topics = topicNames(env.TOPIC_NAMESPACE);
  const kafka = createKafka({ brokers: env.KAFKA_BROKERS, clientId: env.KAFKA_CLIENT_ID ?? `tributary-${name}`, logger });
  const codec = new AvroCodec({ registryUrl: env.SCHEMA_REGISTRY_URL, logger });
  return { kafka, codec, topics };
}

/** Creates the topics and registers the schemas, waiting for the broker and the registry. */
export async function prepareInfrastructure<E extends CommonEnv>(
  context: ServiceContext<E>,
  { kafka, codec, topics }: Infrastructure,
  definitionsFor: (topics: TopicNames) => TopicDefinition[],
): Promise<void> {
  const { env, logger } = context;
  await untilSuccess(
    () =>
      prepareTopics({
        kafka,
        codec,
        logger,
        definitions: definitionsFor(topics),
        numPartitions: env.KAFKA_TOPIC_PARTITIONS,
        replicationFactor: env.KAFKA_REPLICATION_FACTOR,
      }),
    { logger, doing: 'creating topics and registering schemas', signal: context.signal },
  );
}

export async function connectInfrastructure<E extends CommonEnv>(
  context: ServiceContext<E>,
  definitionsFor: (topics: TopicNames) => TopicDefinition[],
): Promise<Infrastructure> {
  const infrastructure = createInfrastructure(context);
  await prepareInfrastructure(context, infrastructure, definitionsFor);
  return infrastructure;
}
