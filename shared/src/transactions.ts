/**
 * A transactional producer for consume-transform-produce: the records a step writes and
 * the offsets it consumed are committed together or not at all. The same class as the
 * router's `transactions.ts`, here so that every service with transactions (the retry
 * scheduler, and the router once it imports it) shares one version.
 *
 * The transactional id must be stable per instance across restarts
 * (`<namespace>-<role>-<INSTANCE_ID>`): when a process is killed and comes back,
 * registering the same id fences the dead process and makes the broker abort its open
 * transaction at once, rather than leave it hanging — and holding back every
 * read_committed consumer — until the transaction timeout. kafkajs registers the id
 * lazily at the first transaction, so `start()` opens and aborts an empty one to do it
 * before anything is read.
 */
import type { Kafka, Producer, Transaction } from 'kafkajs';
import { createProducer } from './kafka.js';
import type { Logger } from './logger.js';

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

export class TransactionalOutput {
  private producer: Producer | undefined;

  constructor(
    private readonly options: { kafka: Kafka; transactionalId: string; logger: Logger },
  ) {}

  async start(): Promise<void> {
    this.producer = await this.connect();
  }

  /**
   * Resolves once a registered producer exists. After a replacement failed, this is what
   * guarantees that the transaction of unknown outcome has been finished by the broker.
   */
  async ensureRegistered(): Promise<void> {
    await this.registered();
  }

  async stop(): Promise<void> {
    await this.producer?.disconnect();
    this.producer = undefined;
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
    const producer = await this.registered();
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
      await this.replace();
      throw outcomeKnown ? error : new TransactionOutcomeUnknown(error);
    }
  }

  private async registered(): Promise<Producer> {
    this.producer ??= await this.connect();
    return this.producer;
  }

  private async connect(): Promise<Producer> {
    const producer = createProducer(this.options.kafka, { transactionalId: this.options.transactionalId });
    await producer.connect();
    try {
      const registration = await producer.transaction();
      await registration.abort();
    } catch (error) {
      await producer.disconnect().catch(() => undefined);
      throw error;
    }
    this.options.logger.info({ transactionalId: this.options.transactionalId }, 'transactional producer registered');
    return producer;
  }

  private async replace(): Promise<void> {
    const broken = this.producer;
    this.producer = undefined;
    await broken?.disconnect().catch((error: unknown) => this.options.logger.warn({ err: error }, 'disconnecting the failed producer'));
    // If this fails too (the broker is away), the next run() connects again.
    this.producer = await this.connect().catch((error: unknown) => {
      this.options.logger.error({ err: error }, 'could not replace the transactional producer');
      return undefined;
    });
  }
}
