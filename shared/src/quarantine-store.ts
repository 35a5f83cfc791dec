/**
 * The quarantine for operators: listing what the services set aside, newest first, with
 * the same read the dead-letter listing uses (topic-scan.ts). The admin API calls this.
 */
import { randomUUID } from 'node:crypto';
import type { Kafka } from 'kafkajs';
import type { QuarantinedRecord, TopicNames } from '@tributary/schemas';
import type { AvroCodec } from './avro.js';
import type { Logger } from './logger.js';
import { KeepNewest, scanTopic } from './topic-scan.js';

export interface QuarantineFilter {
  /** The topic the records came from. */
  sourceTopic?: string | undefined;
  service?: string | undefined;
  reason?: string | undefined;
  /** Epoch ms: quarantined at or after it. */
  since?: number | undefined;
}

export interface StoredQuarantined {
  partition: number;
  offset: string;
  record: QuarantinedRecord;
}

export function matchesQuarantineFilter(record: QuarantinedRecord, filter: QuarantineFilter): boolean {
  if (filter.sourceTopic !== undefined && record.sourceTopic !== filter.sourceTopic) return false;
  if (filter.service !== undefined && record.service !== filter.service) return false;
  if (filter.reason !== undefined && record.reason !== filter.reason) return false;
  if (filter.since !== undefined && record.quarantinedAt < filter.since) return false;
  return true;
}

/** Newest first: later `quarantinedAt`, then higher partition, then higher offset. */
export function newestQuarantinedFirst(a: StoredQuarantined, b: StoredQuarantined): number {
  if (a.record.quarantinedAt !== b.record.quarantinedAt) return b.record.quarantinedAt - a.record.quarantinedAt;
  if (a.partition !== b.partition) return b.partition - a.partition;
  const [x, y] = [BigInt(a.offset), BigInt(b.offset)];
  return x === y ? 0 : x < y ? 1 : -1;
}

export class QuarantineStore {
  constructor(private readonly options: { kafka: Kafka; codec: AvroCodec; topics: TopicNames; logger: Logger; readTimeoutMs?: number }) {}

  async list(filter: QuarantineFilter, limit: number): Promise<{ records: StoredQuarantined[]; matched: number }> {
    const { kafka, codec, topics, logger } = this.options;
    const newest = new KeepNewest<StoredQuarantined>(limit, newestQuarantinedFirst);
    await scanTopic<QuarantinedRecord>(
      {
        kafka,
        topic: topics.quarantine,
        groupId: `${topics.namespace}-quarantine-reader-${randomUUID()}`,
        since: filter.since,
        timeoutMs: this.options.readTimeoutMs ?? 60_000,
        logger,
        decode: (value) => codec.decode<QuarantinedRecord>('quarantine', value),
      },
      ({ partition, offset, value }) => {
        if (matchesQuarantineFilter(value, filter)) newest.add({ partition, offset, record: value });
      },
    );
    return { records: newest.newest(), matched: newest.matched };
  }
}
