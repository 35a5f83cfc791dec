/**
 * The one transactional producer every service uses: what a step writes (and, for
 * consume-transform-produce, the offsets it consumed) is committed together or not at all.
 * Ingest's group commit, the admin API's multi-topic writes, the router's chunks and the
 * retry scheduler's releases all run through `run()`.
 *
 * The transactional id must be stable per instance across restarts
 * (`<namespace>-<role>-<INSTANCE_ID>`): when a process is killed and comes back,
 * registering the same id fences the dead process and makes the broker abort its open
 * transaction at once, rather than leave it hanging — and holding back every
 * read_committed consumer — until the transaction timeout. kafkajs registers the id
 * lazily at the first transaction, so `start()` opens and aborts an empty one to do it
 * before anything is read.
 */
import type { Kafka, Message, Producer, Transaction } from 'kafkajs';
import { createProducer, withAdmin } from './kafka.js';
import type { Logger } from './logger.js';
import { ProducerSlot } from './producer-slot.js';

/**
 * The transaction may or may not have committed: its commit failed and so did the abort.
 * The producer has been replaced (fencing the old one lets the broker finish that
 * transaction one way or the other); the consumer must read back its committed position.
 */
export class TransactionOutcomeUnknown extends Error {
  constructor(override readonly cause: unknown) {
    super(`transaction outcome unknown: ${cause instanceof Error ? cause.message : String(cause)}`);
    this.name = 'TransactionOutcomeUnknown';
  }
}

/**
 * Bytes of records per produce request. kafkajs puts all records of one partition from one
 * send into one record batch, and the broker refuses a batch over `message.max.bytes`
 * (1 MiB by default), so large writes go out in several requests within the transaction.
 */
export const MAX_PRODUCE_REQUEST_BYTES = 800_000;

const sizeOf = (message: Message): number => (message.key?.length ?? 0) + (message.value?.length ?? 0);

/** Consecutive runs of messages of at most `maxBytes` each (a larger message travels alone). */
export function chunkMessages<M extends Message>(messages: M[], maxBytes = MAX_PRODUCE_REQUEST_BYTES): M[][] {
  const chunks: M[][] = [];
  let current: M[] = [];
  let bytes = 0;
  for (const message of messages) {
    const size = sizeOf(message);
    if (current.length > 0 && bytes + size > maxBytes) {
      chunks.push(current);
      current = [];
      bytes = 0;
    }
    current.push(message);
    bytes += size;
  }
  if (current.length > 0) chunks.push(current);
  return chunks;
}

export interface TopicMessages {
  topic: string;
  messages: Message[];
}

/** Records for several topics as `sendInChunks` takes them: one batch per topic, in first-seen order. */
export function groupByTopic(records: Iterable<{ topic: string; key: Message['key']; value: Message['value'] }>): TopicMessages[] {
  const topics = new Map<string, Message[]>();
  for (const { topic, key, value } of records) {
    let messages = topics.get(topic);
    if (!messages) topics.set(topic, (messages = []));
    messages.push({ key, value });
  }
  return [...topics].map(([topic, messages]) => ({ topic, messages }));
}

/**
 * Sends the batches within `transaction` in as few produce requests as the broker accepts:
 * one request for everything up to MAX_PRODUCE_REQUEST_BYTES, across topics.
 */
export async function sendInChunks(transaction: Transaction, batches: TopicMessages[]): Promise<void> {
  let request: TopicMessages[] = [];
  let bytes = 0;
  const flush = async (): Promise<void> => {
    if (request.length > 0) await transaction.sendBatch({ topicMessages: request });
    request = [];
    bytes = 0;
  };
  for (const { topic, messages } of batches) {
    for (const message of messages) {
      const size = sizeOf(message);
      if (bytes > 0 && bytes + size > MAX_PRODUCE_REQUEST_BYTES) await flush();
      const last = request.at(-1);
      if (last?.topic === topic) last.messages.push(message);
      else request.push({ topic, messages: [message] });
      bytes += size;
    }
  }
  await flush();
}

export interface TransactionalOutputOptions {
  kafka: Kafka;
  transactionalId: string;
  logger: Logger;
  /** Told when a registered producer exists or stops existing (readiness). */
  onUsable?: (usable: boolean) => void;
}

export class TransactionalOutput {
  private readonly slot: ProducerSlot;

  constructor(private readonly options: TransactionalOutputOptions) {
    this.slot = new ProducerSlot({
      name: `transactional producer ${options.transactionalId}`,
      logger: options.logger,
      create: () => createProducer(options.kafka, { transactionalId: options.transactionalId }),
      prepare: (producer) => this.register(producer),
      onUsable: options.onUsable,
    });
  }

  /** Registers the producer, waiting for the broker if it is away (`signal` ends the wait). */
  async start(signal?: AbortSignal): Promise<void> {
    await this.slot.start(signal);
  }

  /**
   * Resolves once a registered producer exists. After a replacement failed, this is what
   * guarantees that the transaction of unknown outcome has been finished by the broker.
   */
  async ensureRegistered(): Promise<void> {
    await this.slot.current();
  }

  async stop(): Promise<void> {
    await this.slot.stop();
  }

  /** Writes the batches in one transaction (no consumed offsets involved). */
  write(batches: TopicMessages[]): Promise<void> {
    return this.run((transaction) => sendInChunks(transaction, batches));
  }

  /**
   * Runs `work` in a transaction and commits it. When `work` fails, the transaction is
   * aborted and the error rethrown; when the commit or the abort fails, nobody can say
   * whether the transaction committed, and `TransactionOutcomeUnknown` is thrown. Either
   * way the producer is replaced: a failure may have left it fenced (another producer
   * registered our id) or in a state kafkajs cannot leave, and a fresh registration
   * also makes the broker finish whatever transaction was left open.
   */
  async run(work: (transaction: Transaction) => Promise<void>): Promise<void> {
    const producer = await this.slot.current();
    let transaction: Transaction | undefined;
    let committing = false;
    try {
      transaction = await producer.transaction();
      await work(transaction);
      committing = true;
      await transaction.commit();
    } catch (error) {
      let outcomeKnown = !committing;
      if (transaction !== undefined && !committing) {
        try {
          await transaction.abort();
        } catch (abortError) {
          this.options.logger.error({ err: abortError }, 'transaction abort failed');
          outcomeKnown = false;
        }
      }
      await this.slot.replace(producer);
      throw outcomeKnown ? error : new TransactionOutcomeUnknown(error);
    }
  }

  /** Registers our transactional id now: kafkajs would do it at the first transaction. */
  private async register(producer: Producer): Promise<void> {
    const registration = await producer.transaction();
    await registration.abort();
    this.options.logger.info({ transactionalId: this.options.transactionalId }, 'transactional producer registered');
  }
}

/**
 * What a consume–transform–produce `eachBatch` throws when part of a batch could not be
 * handled. Not a KafkaJS error on purpose: kafkajs retries a batch that failed with it (with
 * backoff, and by rejoining the group after repeated failures), whereas a non-retriable
 * KafkaJS error — such as a fenced producer, which TransactionalOutput has already replaced —
 * would stop the consumer for good.
 */
export class BatchFailed extends Error {
  /** `doing`: what failed, as a verb ("routing", "releasing"). */
  constructor(doing: string, topic: string, partition: number, override readonly cause: unknown) {
    super(`${doing} ${topic}[${partition}] failed: ${cause instanceof Error ? cause.message : String(cause)}`);
    this.name = 'BatchFailed';
  }
}

/**
 * The offsets a consumer group committed for some partitions of a topic — the start of the
 * partition where it committed none — to rewind to after a transaction of unknown outcome.
 * Call it only once `TransactionalOutput.ensureRegistered()` resolved: then that transaction
 * is finished one way or the other and the committed offsets are final.
 */
export async function committedPositions(kafka: Kafka, groupId: string, topic: string, partitions: Iterable<number>): Promise<Map<number, string>> {
  return withAdmin(kafka, async (admin) => {
    const [committed] = await admin.fetchOffsets({ groupId, topics: [topic] });
    let starts: Array<{ partition: number; low: string }> | undefined;
    const positions = new Map<number, string>();
    for (const partition of partitions) {
      const offset = committed?.partitions.find((entry) => entry.partition === partition)?.offset;
      if (offset !== undefined && BigInt(offset) >= 0n) {
        positions.set(partition, offset);
        continue;
      }
      starts ??= await admin.fetchTopicOffsets(topic);
      positions.set(partition, starts.find((entry) => entry.partition === partition)?.low ?? '0');
    }
    return positions;
  });
}
