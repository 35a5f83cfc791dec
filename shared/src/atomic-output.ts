/**
 * A group of records written all or nothing, the cheapest way that still is: one record by
 * itself through an idempotent producer (`SingleRecordOutput`), more in one Kafka transaction
 * (`TransactionalOutput`). The two writers of the ingest topic — ingest's group commit and
 * `@tributary/producer` — write through it, so a call of one event costs the broker the same
 * whichever way it came.
 */
import type { Kafka, Message } from 'kafkajs';
import type { Logger } from './logger.js';
import type { ProduceRecord } from './produce-batcher.js';
import { SingleRecordOutput } from './single-record-output.js';
import { groupByTopic, TransactionalOutput } from './transactions.js';

/** Where a group of records goes: alone and untransacted, or in one transaction. */
export interface GroupWriters {
  single(topic: string, message: Message): Promise<void>;
  transaction(records: ProduceRecord[]): Promise<void>;
}

export type WriteKind = 'single' | 'transaction';

/**
 * The cheapest write of a group that is still atomic: one record by itself (one partition: a
 * produce request appends it whole or not at all), more than one in a transaction — they may
 * go to several partitions and topics, and must be all or nothing.
 */
export const writeKindOf = (records: number): WriteKind => (records === 1 ? 'single' : 'transaction');

/** Writes a group of records atomically, as `writeKindOf` says. */
export function writeGroup(records: ProduceRecord[], defaultTopic: string, writers: GroupWriters): Promise<void> {
  if (writeKindOf(records.length) === 'single') {
    const { topic, key, value } = records[0]!;
    return writers.single(topic ?? defaultTopic, { key, value });
  }
  return writers.transaction(records);
}

/**
 * A lone record's write failed: the broker refused it after kafkajs's retries, and one of
 * those may have landed — unlike a transaction that was aborted, which wrote nothing.
 */
export class SingleWriteFailed extends Error {
  constructor(override readonly cause: unknown) {
    super(`the single-record write failed: ${cause instanceof Error ? cause.message : String(cause)}`);
    this.name = 'SingleWriteFailed';
  }
}

/** Which of the two producers a readiness report is about. */
export type AtomicOutputProducer = 'transactional' | 'single-record';

export interface AtomicOutputOptions {
  kafka: Kafka;
  /** The transactional producer's id: stable per instance (see transactions.ts). */
  transactionalId: string;
  /** Where a record without its own `topic` goes. */
  defaultTopic: string;
  logger: Logger;
  /** Told when either producer becomes usable or stops being so (readiness). */
  onUsable?: (producer: AtomicOutputProducer, usable: boolean) => void;
}

export class AtomicOutput {
  private readonly transactional: TransactionalOutput;
  private readonly single: SingleRecordOutput;

  constructor(private readonly options: AtomicOutputOptions) {
    const { kafka, logger, onUsable } = options;
    this.transactional = new TransactionalOutput({ kafka, logger, transactionalId: options.transactionalId, onUsable: (usable) => onUsable?.('transactional', usable) });
    this.single = new SingleRecordOutput({ kafka, logger, onUsable: (usable) => onUsable?.('single-record', usable) });
  }

  /** Registers the transactional producer and connects the other, waiting for the broker if it is away. */
  async start(signal?: AbortSignal): Promise<void> {
    await Promise.all([this.transactional.start(signal), this.single.start(signal)]);
  }

  async stop(): Promise<void> {
    await Promise.all([this.transactional.stop(), this.single.stop()]);
  }

  /**
   * Resolves once the group is written: a lone record acknowledged by every in-sync replica,
   * a larger group's transaction committed. A rejection from a transaction that failed at
   * commit is `TransactionOutcomeUnknown`, a lone record's `SingleWriteFailed`: the group may
   * be written. Any other rejection means nothing was.
   */
  write(records: ProduceRecord[]): Promise<void> {
    const { defaultTopic } = this.options;
    return writeGroup(records, defaultTopic, {
      single: (topic, message) =>
        this.single.write(topic, message).catch((error: unknown) => {
          throw new SingleWriteFailed(error);
        }),
      transaction: (group) => this.transactional.write(groupByTopic(group.map(({ topic, key, value }) => ({ topic: topic ?? defaultTopic, key, value })))),
    });
  }
}
