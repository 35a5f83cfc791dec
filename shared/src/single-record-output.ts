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
 * A failed send replaces the producer (a new producer id, fresh sequence numbers), as
 * `TransactionalOutput` does after a failed transaction: kafkajs retries a send without
 * limit, so a failure is one it could not retry, after which its sequence state is not to be
 * trusted.
 */
import type { Kafka, Message, Producer } from 'kafkajs';
import { createProducer } from './kafka.js';
import type { Logger } from './logger.js';
import { untilSuccess } from './patience.js';

export interface SingleRecordOutputOptions {
  kafka: Kafka;
  logger: Logger;
  /** Told when a connected producer exists or stops existing (readiness). */
  onUsable?: (usable: boolean) => void;
}

export class SingleRecordOutput {
  private producer: Producer | undefined;
  private connecting: Promise<Producer> | undefined;
  /** Aborted by `stop()`: ends every wait for the broker. */
  private readonly stopping = new AbortController();

  constructor(private readonly options: SingleRecordOutputOptions) {}

  /** Connects the producer, waiting for the broker if it is away (`signal` ends the wait). */
  async start(signal?: AbortSignal): Promise<void> {
    const stop = this.stopping.signal;
    await untilSuccess(() => this.connected(), { logger: this.options.logger, doing: 'connecting the single-record producer', signal: signal ? AbortSignal.any([signal, stop]) : stop });
  }

  async stop(): Promise<void> {
    this.stopping.abort();
    const producer = this.producer;
    this.producer = undefined;
    this.options.onUsable?.(false);
    await producer?.disconnect();
  }

  /** Resolves once the broker has the record (acks=all); rejects if the send failed for good. */
  async write(topic: string, message: Message): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      const producer = await this.connected();
      try {
        await producer.send({ topic, messages: [message], acks: -1 });
        return;
      } catch (error) {
        await this.replace(producer);
        // The broker refused the record because it no longer knows the producer: written
        // again under a new producer id, it cannot land twice.
        if (attempt === 1 && forgotTheProducer(error)) continue;
        throw error;
      }
    }
  }

  private connected(): Promise<Producer> {
    if (this.producer) return Promise.resolve(this.producer);
    if (this.stopping.signal.aborted) return Promise.reject(new Error('the single-record producer is stopped'));
    this.connecting ??= (async () => {
      const producer = createProducer(this.options.kafka);
      try {
        await producer.connect();
      } catch (error) {
        await producer.disconnect().catch(() => undefined);
        throw error;
      }
      if (this.stopping.signal.aborted) {
        await producer.disconnect().catch(() => undefined);
        throw new Error('the single-record producer is stopped');
      }
      this.producer = producer;
      this.options.onUsable?.(true);
      return producer;
    })().finally(() => {
      this.connecting = undefined;
    });
    return this.connecting;
  }

  private async replace(broken: Producer): Promise<void> {
    if (this.producer !== broken) return;
    this.producer = undefined;
    this.options.onUsable?.(false);
    await broken.disconnect().catch((error: unknown) => this.options.logger.warn({ err: error }, 'disconnecting the failed single-record producer'));
    // Connected again by the next write, or here in the background so that readiness returns
    // without one (ingest answers 503 while unready, so no write would come to do it).
    void untilSuccess(() => this.connected(), { logger: this.options.logger, doing: 'reconnecting the single-record producer', signal: this.stopping.signal }).catch(() => undefined);
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
