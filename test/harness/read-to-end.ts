/**
 * Reading a whole topic as it stands: every record up to the end offsets the topic has
 * when the read starts. Where `readTopic` stops at a condition (say, a count), this is
 * what sees a record that arrived twice. The end is known from the consumer's batch-end
 * events, not from messages, because the last offset of a transactionally written
 * partition is a commit marker that no message callback ever sees.
 */
import type { Kafka } from 'kafkajs';
import { createConsumer, SHORT_READER_WAIT_MS, withAdmin } from '@tributary/shared';
import { uniqueName, type ConsumedRecord } from './index.js';

export async function readTopicToEnd(kafka: Kafka, topic: string, options: { timeoutMs?: number } = {}): Promise<ConsumedRecord[]> {
  const timeoutMs = options.timeoutMs ?? 15_000;
  const offsets = await withAdmin(kafka, (admin) => admin.fetchTopicOffsets(topic));
  // The offset of the last record or marker of each partition that has any.
  const remaining = new Map(offsets.filter(({ high, low }) => BigInt(high) > BigInt(low)).map(({ partition, high }) => [partition, BigInt(high) - 1n]));
  const records: ConsumedRecord[] = [];
  if (remaining.size === 0) return records;

  const consumer = createConsumer(kafka, uniqueName('test-reader'), { readUncommitted: false, maxWaitTimeInMs: SHORT_READER_WAIT_MS });
  let finish = (): void => undefined;
  const finished = new Promise<void>((resolve) => (finish = resolve));
  consumer.on(consumer.events.END_BATCH_PROCESS, ({ payload }) => {
    const last = remaining.get(payload.partition);
    if (payload.topic === topic && last !== undefined && BigInt(payload.lastOffset) >= last) remaining.delete(payload.partition);
    if (remaining.size === 0) finish();
  });
  let timer: NodeJS.Timeout | undefined;
  await consumer.connect();
  try {
    await consumer.subscribe({ topic, fromBeginning: true });
    const failed = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        const unfinished = [...remaining.keys()].join(', ');
        reject(new Error(`${topic} was not read to its end within ${timeoutMs} ms (partitions ${unfinished} unfinished)`));
      }, timeoutMs);
      consumer
        .run({
          autoCommit: false,
          eachMessage: async ({ topic: from, partition, message }) => {
            records.push({ topic: from, partition, message });
          },
        })
        .catch(reject);
    });
    await Promise.race([finished, failed]);
  } finally {
    clearTimeout(timer);
    await consumer.disconnect();
  }
  return records;
}
