/**
 * Reading a topic from a point in time to the end it has when the read starts — for the
 * admin API's listings (dead letters, the quarantine), which need every record of a range
 * once, without a consumer group that lives on.
 */
import type { Kafka, KafkaMessage } from 'kafkajs';
import { createConsumer, SHORT_READER_WAIT_MS, withAdmin } from './kafka.js';
import type { Logger } from './logger.js';
import { undecodableCause } from './quarantine.js';

/** A read did not reach the end offsets in time. */
export class TopicReadTimeout extends Error {
  constructor(what: string, timeoutMs: number) {
    super(`${what} did not finish within ${timeoutMs / 1000} s`);
    this.name = 'TopicReadTimeout';
  }
}

export interface RawScanOptions {
  kafka: Kafka;
  topic: string;
  /** A throwaway group id (nothing is committed). */
  groupId: string;
  /** Epoch ms: start at the first record written at or after it (record timestamps); undefined = the start. */
  since: number | undefined;
  timeoutMs: number;
}

export interface ScanOptions<T> extends RawScanOptions {
  logger: Logger;
  decode(value: Buffer): Promise<T>;
}

export interface Scanned<T> {
  partition: number;
  offset: string;
  value: T;
}

/**
 * Calls `onRecord` for every committed record from `since` up to the end offsets of the moment
 * the scan starts. A record that can never be decoded is skipped with a warning; any other
 * decode failure (the registry unreachable) fails the whole read rather than leave a gap.
 * A promise `onRecord` returns is awaited before the next record, so a caller that writes as
 * it reads (a dead-letter replay) holds the read back; its rejection ends the scan.
 */
export async function scanTopic<T>(options: ScanOptions<T>, onRecord: (record: Scanned<T>) => Promise<void> | void): Promise<void> {
  const { topic, logger, decode } = options;
  await scanTopicMessages(options, async (partition, message) => {
    if (!message.value) return;
    let value: T;
    try {
      value = await decode(message.value);
    } catch (error) {
      if (!undecodableCause(error)) throw error;
      logger.warn({ topic, partition, offset: message.offset }, 'unreadable record skipped');
      return;
    }
    await onRecord({ partition, offset: message.offset, value });
  });
}

/**
 * Every committed message of the range, tombstones included, in offset order per partition
 * — for readers that must see deletions (an audience's state on its compacted topic). An
 * error thrown by `onMessage` ends the scan with that error.
 */
export async function scanTopicMessages(options: RawScanOptions, onMessage: (partition: number, message: KafkaMessage) => Promise<void> | void): Promise<void> {
  const { kafka, topic, groupId, since, timeoutMs } = options;
  const ranges = await withAdmin(kafka, async (admin) => {
    const ends = await admin.fetchTopicOffsets(topic);
    const starts = since === undefined ? undefined : await admin.fetchTopicOffsetsByTimestamp(topic, since);
    const result = new Map<number, { from: bigint; end: bigint }>();
    for (const { partition, high, low } of ends) {
      const start = starts?.find((entry) => entry.partition === partition)?.offset ?? low;
      const from = BigInt(start) > BigInt(low) ? BigInt(start) : BigInt(low);
      if (from < BigInt(high)) result.set(partition, { from, end: BigInt(high) });
    }
    return result;
  });
  if (ranges.size === 0) return;

  // Small fetches: a scan may cover millions of records (an audience's state), and kafkajs
  // decodes a whole fetch response into objects at once.
  const consumer = createConsumer(kafka, groupId, { readUncommitted: false, maxBytes: 2 * 1024 * 1024, maxBytesPerPartition: 512 * 1024, maxWaitTimeInMs: SHORT_READER_WAIT_MS });
  const unfinished = new Set(ranges.keys());
  let finish = (): void => undefined;
  let fail = (_error: unknown): void => undefined;
  let failed = false;
  const done = new Promise<void>((resolve, reject) => {
    finish = resolve;
    fail = (error) => {
      failed = true;
      reject(error);
    };
  });
  // Progress comes from batch ends: the last offset of a transactionally written
  // partition is a commit marker that no message callback sees.
  consumer.on(consumer.events.END_BATCH_PROCESS, ({ payload }) => {
    const range = ranges.get(payload.partition);
    if (payload.topic !== topic || !range || failed) return;
    if (BigInt(payload.lastOffset) >= range.end - 1n) unfinished.delete(payload.partition);
    if (unfinished.size === 0) finish();
  });
  await consumer.connect();
  try {
    await consumer.subscribe({ topic, fromBeginning: true });
    await consumer.run({
      autoCommit: false,
      eachBatch: async ({ batch }) => {
        const range = ranges.get(batch.partition);
        if (!range || failed) return;
        for (const message of batch.messages) {
          const offset = BigInt(message.offset);
          if (offset < range.from || offset >= range.end) continue;
          try {
            await onMessage(batch.partition, message);
          } catch (error) {
            fail(error);
            return;
          }
        }
      },
    });
    for (const [partition, { from }] of ranges) consumer.seek({ topic, partition, offset: from.toString() });
    await withTimeout(done, timeoutMs, `reading ${topic}`);
  } finally {
    await consumer.disconnect();
  }
}

export function withTimeout<T>(work: Promise<T>, timeoutMs: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new TopicReadTimeout(what, timeoutMs)), timeoutMs);
  });
  return Promise.race([work, expired]).finally(() => clearTimeout(timer));
}

/** Keeps the `limit` first of what it is given in `order` (newest first, say), without holding the rest. */
export class KeepNewest<T> {
  private readonly kept: T[] = [];
  private seen = 0;

  constructor(
    private readonly limit: number,
    private readonly order: (a: T, b: T) => number,
  ) {}

  add(item: T): void {
    this.seen++;
    if (this.limit <= 0) return;
    if (this.kept.length === this.limit && this.order(item, this.kept[this.kept.length - 1]!) >= 0) return;
    let index = this.kept.length;
    while (index > 0 && this.order(item, this.kept[index - 1]!) < 0) index--;
    this.kept.splice(index, 0, item);
    if (this.kept.length > this.limit) this.kept.pop();
  }

  get matched(): number {
    return this.seen;
  }

  newest(): T[] {
    return [...this.kept];
  }
}
