/**
 * The quarantine: where a service puts a record it can never handle — undecodable, invalid,
 * impossible to render or to write — so that the partition it sits in moves on. Every
 * consume loop writes the quarantine record in the same transaction as the consumed offset
 * that skips the original, so a poison record is neither lost nor handled twice, and it
 * never blocks the records behind it.
 *
 * Pure: `quarantineRecord` builds the value, `quarantineMessage` the Kafka message; the
 * caller puts it into its own transaction.
 */
import { quarantineKey, type QuarantinedRecord, type TopicNames } from '@tributary/schemas';
import type { Message } from 'kafkajs';
import { Counter, type Registry } from 'prom-client';
import { AvroDecodeError, type AvroCodec, type UndecodableReason } from './avro.js';

/**
 * The original value is kept up to this many bytes: enough to see what a producer wrote,
 * small enough that the quarantine record always fits in a produce request however large
 * the original was.
 */
export const QUARANTINE_VALUE_BYTES_KEPT = 64 * 1024;

export const QUARANTINE_REASONS = [
  'not_framed',
  'unknown_schema',
  'incompatible_schema',
  'undecodable',
  'missing_field',
  'invalid_id',
  'invalid_timestamp',
  'invalid_json',
  'too_deep',
  'too_large',
  'unrenderable',
  /** A database refused the record's data (the delivery-log indexer): it would block its partition for good. */
  'unwritable',
  /** What the record's outcome writes could not be encoded (a value past its schema's range): it would stop its service at every read. */
  'unencodable',
] as const satisfies readonly string[];

/** Why a record was quarantined: a decode failure (UndecodableReason), or what a service found wrong with it. */
export type QuarantineReason = (typeof QUARANTINE_REASONS)[number];

/** What a consume loop knows about the record it gives up on. */
export interface PoisonRecord {
  topic: string;
  partition: number;
  offset: string;
  key: Buffer | null;
  value: Buffer | null;
  /** The Kafka record timestamp (epoch ms, as kafkajs gives it: a string). */
  timestamp: string;
}

export interface QuarantineCause {
  reason: QuarantineReason;
  error: string;
}

export function quarantineRecord(service: string, record: PoisonRecord, cause: QuarantineCause, now: number): QuarantinedRecord {
  const valueSize = record.value?.length ?? 0;
  const recordTimestamp = Number(record.timestamp);
  return {
    service,
    sourceTopic: record.topic,
    partition: record.partition,
    offset: Number(record.offset),
    reason: cause.reason,
    error: cause.error.length > 2000 ? `${cause.error.slice(0, 2000)}…` : cause.error,
    key: record.key && record.key.length > 1024 ? record.key.subarray(0, 1024) : record.key,
    value: record.value && valueSize > QUARANTINE_VALUE_BYTES_KEPT ? record.value.subarray(0, QUARANTINE_VALUE_BYTES_KEPT) : record.value,
    valueSize,
    recordTimestamp: Number.isFinite(recordTimestamp) ? recordTimestamp : now,
    quarantinedAt: now,
  };
}

/** The Kafka message for the quarantine topic (key `<topic>/<partition>/<offset>`). */
export function quarantineMessage(
  codec: Pick<AvroCodec, 'encode'>,
  topics: TopicNames,
  service: string,
  record: PoisonRecord,
  cause: QuarantineCause,
  now: number,
): { topic: string; message: Message } {
  const value = codec.encode(topics.quarantine, quarantineRecord(service, record, cause, now));
  return { topic: topics.quarantine, message: { key: quarantineKey(record.topic, record.partition, record.offset), value } };
}

/**
 * The quarantine cause when `error` (from `AvroCodec.decode`) says the record can never be
 * decoded; undefined when it may pass on a later try (the registry unreachable), in which
 * case the caller must retry rather than quarantine.
 */
export function undecodableCause(error: unknown): { reason: UndecodableReason; error: string } | undefined {
  if (error instanceof AvroDecodeError) return { reason: error.reason, error: error.message };
  return undefined;
}

/**
 * `tributary_quarantined_total{topic,reason}`: the one series every service counts its
 * quarantined records in, with every reason of every topic the service consumes at 0 from the
 * start. A series that first appears at 1 has no earlier sample for `increase()` to compare
 * with, so the first poison record of a topic and reason would never trip an alert.
 */
export function createQuarantineCounter(registry: Registry, consumedTopics: readonly string[]): Counter<'topic' | 'reason'> {
  const counter = new Counter({
    name: 'tributary_quarantined_total',
    help: 'Records set aside on the quarantine topic, by the topic they came from and why',
    labelNames: ['topic', 'reason'],
    registers: [registry],
  });
  for (const topic of consumedTopics) zeroQuarantineSeries(counter, topic);
  return counter;
}

/** Every reason's series of `topic` at 0: for a topic a service starts consuming after its counter was made. */
export function zeroQuarantineSeries(counter: Counter<'topic' | 'reason'>, topic: string): void {
  for (const reason of QUARANTINE_REASONS) counter.inc({ topic, reason }, 0);
}
