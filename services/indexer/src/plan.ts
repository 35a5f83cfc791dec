/**
 * From decoded records to what one database transaction writes — pure but for
 * `mapMessagesWhenCurrent`'s wait on the config view. Each record either becomes rows or is
 * poison (undecodable, or holding something no row can), and poison is set aside with its
 * reason so the partition moves on.
 */
import type { DeliveryAttempt, IngestMessage } from '@tributary/schemas';
import type { ConfigFreshness, QuarantineCause } from '@tributary/shared';
import { attemptRow, foldDeliveryStates, messageRow, Unindexable, type AttemptRow, type MessageRow, type RoutingConfig } from './rows.js';
import type { RowsToWrite } from './store/write.js';

/** The record as read from Kafka, for the quarantine. */
export interface RawRecord {
  offset: string;
  key: Buffer | null;
  value: Buffer | null;
  timestamp: string;
}

export type Decoded<T> = { raw: RawRecord; value: T } | { raw: RawRecord; poison: QuarantineCause };

export type Mapped = { raw: RawRecord; attempt: AttemptRow } | { raw: RawRecord; message: MessageRow } | { raw: RawRecord; poison: QuarantineCause };

function poisonOf(error: unknown): QuarantineCause {
  if (error instanceof Unindexable) return { reason: error.reason, error: error.message };
  // Mapping a record is a pure function of it: whatever else fails fails on every try.
  return { reason: 'unwritable', error: `could not index the record: ${error instanceof Error ? error.message : String(error)}` };
}

export function mapAttempts(partition: number, decoded: readonly Decoded<DeliveryAttempt>[]): Mapped[] {
  return decoded.map((record) => {
    if ('poison' in record) return record;
    try {
      return { raw: record.raw, attempt: attemptRow(record.value, partition, Number(record.raw.offset)) };
    } catch (error) {
      return { raw: record.raw, poison: poisonOf(error) };
    }
  });
}

export function mapMessages(partition: number, decoded: readonly Decoded<IngestMessage>[], config: RoutingConfig): Mapped[] {
  return decoded.map((record) => {
    if ('poison' in record) return record;
    try {
      return { raw: record.raw, ...messageRow(record.value, partition, Number(record.raw.offset), config) };
    } catch (error) {
      return { raw: record.raw, poison: poisonOf(error) };
    }
  });
}

/**
 * `mapMessages` once the config view holds every config record written before the newest
 * receipt in the chunk. A message's routing is recomputed here, not read from the router, and
 * the view follows the config topic on its own: without the wait, a message sent right after
 * its destination was created could be routed before the view had it, and show
 * `no_destinations` beside its deliveries.
 */
export async function mapMessagesWhenCurrent(
  partition: number,
  decoded: readonly Decoded<IngestMessage>[],
  config: RoutingConfig,
  freshness: Pick<ConfigFreshness, 'caughtUpSince'>,
): Promise<Mapped[]> {
  const newestReceipt = decoded.reduce((newest, record) => ('value' in record ? Math.max(newest, record.value.receivedAt) : newest), Number.NEGATIVE_INFINITY);
  if (Number.isFinite(newestReceipt)) await freshness.caughtUpSince(newestReceipt);
  return mapMessages(partition, decoded, config);
}

/** The rows of the records that are not poison. */
export function rowsOf(mapped: readonly Mapped[]): RowsToWrite {
  const attempts: AttemptRow[] = [];
  const messages: MessageRow[] = [];
  for (const record of mapped) {
    if ('attempt' in record) attempts.push(record.attempt);
    else if ('message' in record) messages.push(record.message);
  }
  return { attempts, messages, states: foldDeliveryStates(attempts) };
}

export function poisonRecords(mapped: readonly Mapped[]): Array<{ raw: RawRecord; poison: QuarantineCause }> {
  return mapped.filter((record): record is { raw: RawRecord; poison: QuarantineCause } => 'poison' in record);
}

export const rowCount = (rows: RowsToWrite): number => rows.attempts.length + rows.messages.length;

/** The offsets to commit for a group of chunks: per topic, each partition's furthest. */
export function offsetsOf(chunks: ReadonlyArray<{ topic: string; partition: number; nextOffset: string }>): Array<{ topic: string; partitions: Array<{ partition: number; offset: string }> }> {
  const byTopic = new Map<string, Map<number, bigint>>();
  for (const { topic, partition, nextOffset } of chunks) {
    let partitions = byTopic.get(topic);
    if (!partitions) byTopic.set(topic, (partitions = new Map()));
    const offset = BigInt(nextOffset);
    if ((partitions.get(partition) ?? -1n) < offset) partitions.set(partition, offset);
  }
  return [...byTopic].map(([topic, partitions]) => ({ topic, partitions: [...partitions].map(([partition, offset]) => ({ partition, offset: offset.toString() })) }));
}
