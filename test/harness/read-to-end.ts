/**
 * Reading a whole topic as it stands: every record up to the end offsets the topic has
 * when the read starts. Where `readTopic` stops at a condition (say, a count), this is
 * what sees a record that arrived twice. The end is known from the consumer's batch-end
 * events, not from messages, because the last offset of a transactionally written
 * partition is a commit marker that no message callback ever sees.
 *
 * The end is the committed one (read_committed), and the broker writes a transaction's
 * commit markers after EndTxn has answered: right after a commit — the test's own, or one a
 * service counted or answered for — the transaction may still look open, and a read that
 * starts then rightly ends before it. `until` reads on to the topic's newer ends until what
 * the test waits for is there.
 */
import type { Kafka } from 'kafkajs';
import { createConsumer, SHORT_READER_WAIT_MS, withAdmin } from '@tributary/shared';
import { uniqueName, type ConsumedRecord } from './index.js';

export interface ReadToEndOptions {
  /** For the whole read, `until`'s waits included (default 15 s). */
  timeoutMs?: number;
  /**
   * Checked with the records read so far each time an end is reached (again only once more
   * records were read): while it does not hold, the end offsets are fetched again and the read
   * goes on to them. When `timeoutMs` passes first, the records read to the last end reached
   * are returned, for the caller's checks to say what is missing.
   */
  until?: (records: ConsumedRecord[]) => boolean | Promise<boolean>;
}

/** How long to wait before asking for the end offsets again while `until` does not hold. */
const END_POLL_MS = 50;

/** The offset of the last record or marker of each partition that has any. */
async function lastOffsets(kafka: Kafka, topic: string): Promise<Map<number, bigint>> {
  const offsets = await withAdmin(kafka, (admin) => admin.fetchTopicOffsets(topic));
  return new Map(offsets.filter(({ high, low }) => BigInt(high) > BigInt(low)).map(({ partition, high }) => [partition, BigInt(high) - 1n]));
}

export async function readTopicToEnd(kafka: Kafka, topic: string, options: ReadToEndOptions = {}): Promise<ConsumedRecord[]> {
  const timeoutMs = options.timeoutMs ?? 15_000;
  const until = options.until ?? (() => true);
  const records: ConsumedRecord[] = [];
  let ends = await lastOffsets(kafka, topic);
  if (ends.size === 0 && (await until(records))) return records;

  const consumer = createConsumer(kafka, uniqueName('test-reader'), { readUncommitted: false, maxWaitTimeInMs: SHORT_READER_WAIT_MS });
  // The last offset (record or marker) of the batches read, per partition.
  const reached = new Map<number, bigint>();
  let wake = (): void => undefined;
  consumer.on(consumer.events.END_BATCH_PROCESS, ({ payload }) => {
    if (payload.topic !== topic) return;
    const last = BigInt(payload.lastOffset);
    if (last > (reached.get(payload.partition) ?? -1n)) reached.set(payload.partition, last);
    wake();
  });
  const atEnd = () => [...ends].every(([partition, last]) => (reached.get(partition) ?? -1n) >= last);
  let timer: NodeJS.Timeout | undefined;
  const pause = (ms: number) => new Promise<void>((resolve) => (timer = setTimeout(resolve, ms)));

  await consumer.connect();
  try {
    await consumer.subscribe({ topic, fromBeginning: true });
    const deadline = Date.now() + timeoutMs;
    const failed = new Promise<never>((_, reject) => {
      consumer
        .run({
          autoCommit: false,
          eachMessage: async ({ topic: from, partition, message }) => {
            records.push({ topic: from, partition, message });
          },
        })
        .catch(reject);
    });
    failed.catch(() => undefined);
    let checked = -1;
    for (;;) {
      while (!atEnd()) {
        const left = deadline - Date.now();
        if (left <= 0) {
          const unfinished = [...ends.keys()].filter((partition) => (reached.get(partition) ?? -1n) < ends.get(partition)!).join(', ');
          throw new Error(`${topic} was not read to its end within ${timeoutMs} ms (partitions ${unfinished} unfinished)`);
        }
        await Promise.race([new Promise<void>((resolve) => (wake = resolve)), pause(left), failed]);
        clearTimeout(timer);
      }
      if (records.length !== checked) {
        checked = records.length;
        if (await until(records)) return records;
      }
      const left = deadline - Date.now();
      if (left <= 0) return records;
      await Promise.race([pause(Math.min(END_POLL_MS, left)), failed]);
      clearTimeout(timer);
      ends = await lastOffsets(kafka, topic);
    }
  } finally {
    clearTimeout(timer);
    await consumer.disconnect();
  }
}

/**
 * An `until` for one `readTopicToEnd`: every one of `keys` has been read. It remembers how
 * far it has looked, so it is cheap to ask again as the records grow.
 */
export function keysRead(keys: Iterable<string>): (records: ConsumedRecord[]) => boolean {
  const missing = new Set(keys);
  let looked = 0;
  return (records) => {
    for (; looked < records.length; looked++) {
      const key = records[looked]!.message.key?.toString();
      if (key !== undefined) missing.delete(key);
    }
    return missing.size === 0;
  };
}
