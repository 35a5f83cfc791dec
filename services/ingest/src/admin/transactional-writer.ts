/**
 * Writes records to several topics in one Kafka transaction: an audience sync's Identify
 * messages and its new membership state become visible together or not at all, and a
 * deletion's messages for every source likewise. Callers run one transaction at a time.
 *
 * The transactional id carries host and pid, like the Segment API's producer: admin
 * transactions last milliseconds, so a crash inside one is rare, and a stable id shared
 * by two live processes would fence one of them.
 */
import type { Kafka, Message, Producer, Transaction } from 'kafkajs';
import { createProducer, type Logger } from '@tributary/shared';

export interface TopicMessages {
  topic: string;
  messages: Message[];
}

/**
 * Bytes of records per produce request. kafkajs puts all records of one partition from
 * one send into one record batch, and the broker refuses a batch over message.max.bytes
 * (1 MiB by default), so a large audience sync is sent in several requests.
 */
export const MAX_SEND_BYTES = 800_000;

const sizeOf = (message: Message) => (message.key?.length ?? 0) + (message.value?.length ?? 0);

/** Consecutive runs of messages of at most `maxBytes` each (a larger message travels alone). */
export function chunkMessages(messages: Message[], maxBytes: number): Message[][] {
  const chunks: Message[][] = [];
  let current: Message[] = [];
  let bytes = 0;
  for (const message of messages) {
    if (current.length > 0 && bytes + sizeOf(message) > maxBytes) {
      chunks.push(current);
      current = [];
      bytes = 0;
    }
    current.push(message);
    bytes += sizeOf(message);
  }
  if (current.length > 0) chunks.push(current);
  return chunks;
}

export class TransactionalWriter {
  private producer: Producer | undefined;
  private broken = false;

  constructor(private readonly options: { kafka: Kafka; transactionalId: string; logger: Logger }) {}

  async connect(): Promise<Producer> {
    const producer = createProducer(this.options.kafka, { transactionalId: this.options.transactionalId });
    await producer.connect();
    this.producer = producer;
    this.broken = false;
    return producer;
  }

  async disconnect(): Promise<void> {
    const producer = this.producer;
    this.producer = undefined;
    await producer?.disconnect();
  }

  async write(batches: TopicMessages[]): Promise<void> {
    const producer = await this.usableProducer();
    const transaction = await producer.transaction();
    try {
      for (const { topic, messages } of batches) {
        for (const chunk of chunkMessages(messages, MAX_SEND_BYTES)) await transaction.send({ topic, messages: chunk });
      }
      await transaction.commit();
    } catch (error) {
      await this.abandon(transaction, error);
      throw error;
    }
  }

  private async usableProducer(): Promise<Producer> {
    if (this.producer && !this.broken) return this.producer;
    await this.producer?.disconnect().catch((error: unknown) => this.options.logger.warn({ err: error }, 'disconnecting the failed admin producer failed'));
    return this.connect();
  }

  private async abandon(transaction: Transaction, cause: unknown): Promise<void> {
    this.options.logger.warn({ err: cause }, 'admin transaction failed; aborting it');
    try {
      if (transaction.isActive()) await transaction.abort();
    } catch (error) {
      // kafkajs cannot reuse a producer whose transaction state is lost; replace it next time.
      this.options.logger.error({ err: error }, 'aborting the admin transaction failed; the producer will be replaced');
      this.broken = true;
    }
  }
}
