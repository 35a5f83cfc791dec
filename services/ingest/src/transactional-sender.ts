/**
 * The Kafka end of ingest: one transactional producer (acks=all, idempotent) that writes
 * a group of records in one transaction. A failed transaction is aborted; if even the
 * abort fails (the broker fenced or timed out the transaction) the producer is replaced
 * before the next transaction, since kafkajs cannot use a producer whose transaction
 * state is lost.
 */
import type { Kafka, Producer, Transaction } from 'kafkajs';
import { createProducer, type Logger } from '@tributary/shared';
import type { ProduceRecord, TransactionalSend } from './produce-batcher.js';

/**
 * Bytes of records per produce request inside a transaction. kafkajs puts all records of
 * one partition from one send into one record batch, and the broker refuses a batch over
 * `message.max.bytes` (1 MiB by default), so large transactions are sent in several
 * requests, each well below that.
 */
export const MAX_SEND_BYTES = 800_000;

/** Consecutive runs of records of at most `maxBytes` each (a larger record travels alone). */
export function chunkRecords(records: ProduceRecord[], maxBytes: number): ProduceRecord[][] {
  const chunks: ProduceRecord[][] = [];
  let current: ProduceRecord[] = [];
  let bytes = 0;
  for (const record of records) {
    const size = record.key.length + record.value.length;
    if (current.length > 0 && bytes + size > maxBytes) {
      chunks.push(current);
      current = [];
      bytes = 0;
    }
    current.push(record);
    bytes += size;
  }
  if (current.length > 0) chunks.push(current);
  return chunks;
}

export interface TransactionalSenderOptions {
  kafka: Kafka;
  transactionalId: string;
  topic: string;
  logger: Logger;
  /** Told when the producer becomes usable or unusable (for readiness). */
  onUsable?: (usable: boolean) => void;
}

export class TransactionalSender {
  private producer: Producer | undefined;
  private broken = false;

  constructor(private readonly options: TransactionalSenderOptions) {}

  /** Connects and initialises transactions (FindCoordinator, InitProducerId). */
  async connect(): Promise<void> {
    const producer = createProducer(this.options.kafka, { transactionalId: this.options.transactionalId });
    await producer.connect();
    this.producer = producer;
    this.broken = false;
    this.options.onUsable?.(true);
  }

  async disconnect(): Promise<void> {
    const producer = this.producer;
    this.producer = undefined;
    this.options.onUsable?.(false);
    await producer?.disconnect();
  }

  readonly send: TransactionalSend = async (records) => {
    const producer = await this.usableProducer();
    const transaction = await producer.transaction();
    try {
      for (const messages of chunkRecords(records, MAX_SEND_BYTES)) {
        await transaction.send({ topic: this.options.topic, messages });
      }
      await transaction.commit();
    } catch (error) {
      await this.abandon(transaction);
      throw error;
    }
  };

  private async usableProducer(): Promise<Producer> {
    if (this.producer && !this.broken) return this.producer;
    const stale = this.producer;
    this.producer = undefined;
    await stale?.disconnect().catch((error: unknown) => this.options.logger.warn({ err: error }, 'disconnecting the failed producer failed'));
    this.options.logger.info({ transactionalId: this.options.transactionalId }, 'reconnecting the transactional producer');
    await this.connect();
    return this.producer!;
  }

  /** Aborts a failed transaction (the failure itself is reported by the caller). */
  private async abandon(transaction: Transaction): Promise<void> {
    try {
      if (transaction.isActive()) await transaction.abort();
    } catch (error) {
      this.options.logger.error({ err: error }, 'aborting the ingest transaction failed; the producer will be replaced');
      this.broken = true;
      this.options.onUsable?.(false);
    }
  }
}
