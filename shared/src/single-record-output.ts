/**
 * Writes that need no transaction: one record, to one partition. A produce request appends a
 * partition's record batch whole or not at all, and the idempotent producer's sequence
 * numbers make its retries land once, so a lone record is as atomic without a transaction as
 * with one. A transaction around it costs the broker four more requests (AddPartitionsToTxn
 * and its verification, EndTxn, the marker write) and two transaction-log appends, and its
 * writer two more round trips before the record is committed — for an analytics.js-style
 * client that sends one event per request, that is most of what the pipeline's first hop
 * costs the broker (`writeGroup` in atomic-output.ts decides).
 *
 * read_committed consumers see such a record once the broker has it, or, when a transaction
 * of another producer is open earlier in the partition, once that one ends — never before
 * anything committed ahead of it.
 *
 * A failed send replaces the producer (a new producer id, fresh sequence numbers;
 * `ProducerSlot`), as `TransactionalOutput` does after a failed transaction: kafkajs retries a
 * send without limit, so a failure is one it could not retry, after which its sequence state
 * is not to be trusted.
 */
import type { Kafka, Message } from 'kafkajs';
import { createProducer } from './kafka.js';
import type { Logger } from './logger.js';
import { ProducerSlot } from './producer-slot.js';

export interface SingleRecordOutputOptions {
  kafka: Kafka;
  logger: Logger;
  /** Told when a connected producer exists or stops existing (readiness). */
  onUsable?: (usable: boolean) => void;
}

export class SingleRecordOutput {
  private readonly slot: ProducerSlot;

  constructor(options: SingleRecordOutputOptions) {
    this.slot = new ProducerSlot({ name: 'single-record producer', logger: options.logger, create: () => createProducer(options.kafka), onUsable: options.onUsable });
  }

  /** Connects the producer, waiting for the broker if it is away (`signal` ends the wait). */
  async start(signal?: AbortSignal): Promise<void> {
    await this.slot.start(signal);
  }

  async stop(): Promise<void> {
    await this.slot.stop();
  }

  /** Resolves once the broker has the record (acks=all); rejects if the send failed for good. */
  async write(topic: string, message: Message): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      const producer = await this.slot.current();
      try {
        await producer.send({ topic, messages: [message], acks: -1 });
        return;
      } catch (error) {
        await this.slot.replace(producer);
        // The broker refused the record because it no longer knows the producer: written
        // again under a new producer id, it cannot land twice.
        if (attempt === 1 && forgotTheProducer(error)) continue;
        throw error;
      }
    }
  }
}

/**
 * The broker has forgotten this producer's id or sequence — after `producer.id.expiration.ms`
 * (a day by default) without a write, or once its state was lost — and refused the record.
 */
export function forgotTheProducer(error: unknown): boolean {
  // kafkajs's retrier wraps a non-retriable protocol error in KafkaJSNonRetriableError (`cause`).
  for (let current = error, depth = 0; current !== null && typeof current === 'object' && depth < 5; depth++) {
    const { type, cause } = current as { type?: unknown; cause?: unknown };
    if (type === 'UNKNOWN_PRODUCER_ID' || type === 'OUT_OF_ORDER_SEQUENCE_NUMBER') return true;
    current = cause;
  }
  return false;
}
