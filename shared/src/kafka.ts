/**
 * kafkajs wiring shared by every service: one client per process, logs through pino,
 * producers that are idempotent with acks=all, consumers with short fetch waits (the
 * kafkajs default waits up to 5 s for data, which would dominate delivery latency), and
 * idempotent topic creation. Every client reads batches compressed with GZIP, LZ4, Snappy or
 * ZSTD (compression-codecs.ts).
 */
// Before kafkajs: it replaces a kafkajs module that kafkajs captures as it loads (see there).
import { messageGroupingFixed } from './kafkajs-grouping.js';
import {
  Kafka,
  logLevel as KafkaLogLevel,
  type Admin,
  type Consumer,
  type ConsumerConfig,
  type ITopicConfig,
  type LogEntry,
  type Producer,
  type ProducerConfig,
} from 'kafkajs';
import { registerCompressionCodecs } from './compression-codecs.js';
import { applyKafkajsFixes, FIXED_KAFKAJS_VERSION, recordBatchCrcFixed } from './kafkajs-fixes.js';
import type { Logger } from './logger.js';
import { javaCompatiblePartitioner } from './partitioner.js';

export interface KafkaSettings {
  brokers: string[];
  clientId: string;
  logger: Logger;
}

function pinoLogCreator(logger: Logger) {
  const kafkaLogger = logger.child({ component: 'kafkajs' });
  return () =>
    ({ level, log }: LogEntry) => {
      const { message, timestamp: _timestamp, logger: _name, ...extra } = log;
      // kafkajs logs every error code a broker answers ("Response Produce(...)") at ERROR,
      // including the retriable ones it then retries (CONCURRENT_TRANSACTIONS after each
      // commit, coordinator loading...). A failure that survives the retries reaches the
      // caller as an exception and is logged there, so these are only debugging detail.
      if (level === KafkaLogLevel.ERROR && message.startsWith('Response ')) {
        kafkaLogger.debug(extra, message);
        return;
      }
      // A send kafkajs is about to retry. Right after each transaction commit the broker
      // answers CONCURRENT_TRANSACTIONS until its markers are written: routine, debug.
      // Anything else (the broker away, leadership moving) is worth a warning, since an
      // idempotent producer retries without end and would otherwise fail silently.
      if (level === KafkaLogLevel.ERROR && message.startsWith('Failed to send messages')) {
        if (message.includes('concurrent operation on the same transaction')) kafkaLogger.debug(extra, message);
        else kafkaLogger.warn(extra, message);
        return;
      }
      switch (level) {
        case KafkaLogLevel.ERROR:
          kafkaLogger.error(extra, message);
          break;
        case KafkaLogLevel.WARN:
          kafkaLogger.warn(extra, message);
          break;
        case KafkaLogLevel.INFO:
          kafkaLogger.debug(extra, message); // kafkajs INFO is chatty (every join/commit); keep it at debug
          break;
        default:
          kafkaLogger.trace(extra, message);
      }
    };
}

export function createKafka({ brokers, clientId, logger }: KafkaSettings): Kafka {
  if (!applyKafkajsFixes()) {
    logger.warn({ fixedVersion: FIXED_KAFKAJS_VERSION }, 'kafkajs is not the version its fixes were written for: they are not applied (see kafkajs-fixes.ts)');
  } else {
    if (!recordBatchCrcFixed()) logger.debug('kafkajs had loaded its record-batch encoder before the fixes: its own CRC-32C stays in use');
    if (!messageGroupingFixed()) logger.debug('kafkajs was loaded before @tributary/shared: its quadratic grouping of messages by partition stays in use (see kafkajs-grouping.ts)');
  }
  // kafkajs alone reads only GZIP: a batch a direct producer (or the topic's own
  // compression.type) compressed with LZ4, Snappy or ZSTD stopped the consumer for good.
  registerCompressionCodecs();
  return new Kafka({
    clientId,
    brokers,
    logLevel: KafkaLogLevel.INFO,
    logCreator: pinoLogCreator(logger),
    connectionTimeout: 3000,
    requestTimeout: 30000,
    retry: { initialRetryTime: 100, retries: 8, maxRetryTime: 5000 },
  });
}

export interface ProducerOptions {
  transactionalId?: string;
  /**
   * First retry delay in ms. Default 10 for transactional producers, 100 otherwise. The
   * CONCURRENT_TRANSACTIONS a transaction begun right after a commit meets is retried inside
   * the request, sooner (`retryingConcurrentTransactions` in kafkajs-fixes.ts); what is left
   * to kafkajs's retrier — a leader moving, a coordinator loading — should not hold a producer
   * that commits back to back (ingest's group commit, the router's chunks) for 100 ms either.
   */
  initialRetryTimeMs?: number;
}

/**
 * How long a transaction of ours may stay open before the broker aborts it (and bumps the
 * producer's epoch, so that the producer's next request fails as fenced). Exported for callers
 * that must tell that abort from a fence by another producer registering the same id.
 */
export const TRANSACTION_TIMEOUT_MS = 15_000;

/** Idempotent, acks=all producer. With `transactionalId` it is also transactional. */
export function createProducer(kafka: Kafka, options: ProducerOptions = {}): Producer {
  const config: ProducerConfig = {
    idempotent: true,
    // Idempotence only holds if a send is never abandoned half-way, so retries are
    // unbounded (kafkajs warns otherwise); callers that must answer in bounded time, like
    // ingest, put their own deadline around the send.
    retry: { retries: Number.MAX_SAFE_INTEGER, initialRetryTime: options.initialRetryTimeMs ?? (options.transactionalId ? 10 : 100), maxRetryTime: 5000 },
    maxInFlightRequests: 1,
    allowAutoTopicCreation: false,
    // The Java client's murmur2 partitioner (kafkajs's DefaultPartitioner, without its
    // allocations), so records keyed the same way by other producers land on the same partition.
    createPartitioner: javaCompatiblePartitioner,
  };
  if (options.transactionalId) {
    config.transactionalId = options.transactionalId;
    // Our transactions last milliseconds. If a process dies mid-transaction and comes back
    // under another INSTANCE_ID (a rescheduled pod), nothing fences it, and read_committed
    // consumers wait behind the open transaction until this timeout aborts it.
    config.transactionTimeout = TRANSACTION_TIMEOUT_MS;
  }
  return kafka.producer(config);
}

/**
 * Consumers of the pipeline's topics. A fetch with nothing to return waits at the broker up
 * to `maxWaitTimeInMs`, and the broker answers a waiting fetch as soon as a record — or, for
 * read_committed readers, a commit marker — makes data available, so the wait costs no
 * latency to a consumer that never pauses (every one but the retry-scheduler's tiers, which
 * set their own). What it does cost is idle polling: at the former 50 ms every idle consumer
 * made 20 fetches a second, ≈ 2 % of a core in its process and 0.6 % in the broker, and the
 * pipeline runs a dozen of them. A longer wait only delays noticing a rebalance or finishing a
 * shutdown by up to that long. Short-lived readers that stop at the end of a topic (scans,
 * tests) set a short wait so that stopping is quick.
 */
export const CONSUMER_DEFAULTS: Omit<ConsumerConfig, 'groupId'> = {
  maxWaitTimeInMs: 1_000,
  minBytes: 1,
  sessionTimeout: 30_000,
  rebalanceTimeout: 60_000,
  heartbeatInterval: 3_000,
  allowAutoTopicCreation: false,
  maxBytesPerPartition: 4 * 1024 * 1024,
};

/** The fetch wait of readers that stop once they reach the end of what they read. */
export const SHORT_READER_WAIT_MS = 100;

export function createConsumer(
  kafka: Kafka,
  groupId: string,
  overrides: Partial<Omit<ConsumerConfig, 'groupId'>> = {},
): Consumer {
  return kafka.consumer({ ...CONSUMER_DEFAULTS, ...overrides, groupId });
}

export interface TopicSpec {
  topic: string;
  /** Unset: the broker's num.partitions. */
  numPartitions?: number;
  /** Unset: the broker's default.replication.factor. */
  replicationFactor?: number;
  config?: Record<string, string>;
}

/** Creates the topics that do not exist yet; existing topics are left as they are. */
export async function ensureTopics(admin: Admin, specs: TopicSpec[]): Promise<string[]> {
  const existing = new Set(await admin.listTopics());
  const missing = specs.filter((spec) => !existing.has(spec.topic));
  if (missing.length === 0) return [];
  const topics: ITopicConfig[] = missing.map((spec) => ({
    topic: spec.topic,
    numPartitions: spec.numPartitions ?? -1,
    replicationFactor: spec.replicationFactor ?? -1,
    configEntries: Object.entries(spec.config ?? {}).map(([name, value]) => ({ name, value })),
  }));
  try {
    await admin.createTopics({ topics, waitForLeaders: true });
  } catch (error) {
    // Several services start at once and race to create the same topics; and right after a
    // creation a broker may answer metadata requests for a moment as if the topic did not
    // exist (KRaft spreads new topics asynchronously, and kafkajs retries only
    // LEADER_NOT_AVAILABLE there). Either is fine once the topics exist with leaders.
    if (!(await topicsLed(admin, missing.map((spec) => spec.topic), TOPICS_SETTLE_MS))) throw error;
  }
  return missing.map((spec) => spec.topic);
}

const TOPICS_SETTLE_MS = 15_000;

/** Waits until every topic exists and each of its partitions has a leader; false on timeout. */
async function topicsLed(admin: Admin, names: string[], timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      const { topics } = await admin.fetchTopicMetadata({ topics: names });
      const led = topics.every((topic) => topic.partitions.length > 0 && topic.partitions.every((partition) => partition.leader >= 0));
      if (topics.length === names.length && led) return true;
    } catch {
      // Unknown topic or leader not yet elected: asked again below until the deadline.
    }
    if (Date.now() >= deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

export async function withAdmin<T>(kafka: Kafka, work: (admin: Admin) => Promise<T>): Promise<T> {
  const admin = kafka.admin();
  await admin.connect();
  try {
    return await work(admin);
  } finally {
    await admin.disconnect();
  }
}
