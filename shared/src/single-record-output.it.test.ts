import { describe, expect, it } from 'vitest';
import { testKafka, testLogger, uniqueName } from '@tributary/test/harness';
import { createConsumer, ensureTopics, withAdmin } from './kafka.js';
import { partitionForKey } from './partitioner.js';
import { SingleRecordOutput } from './single-record-output.js';
import { TransactionalOutput } from './transactions.js';

/** The partition the services' producers give `key` on a topic of six partitions. */
const partitionOf = (key: string): number => partitionForKey(key, 6);

describe('SingleRecordOutput against a real broker', () => {
  it('writes records that read_committed consumers read, on the partitions the transactional writes use, never ahead of an open transaction', { timeout: 90_000 }, async () => {
    const kafka = testKafka();
    const logger = testLogger();
    const topic = uniqueName('it.single-record');
    await withAdmin(kafka, (admin) => ensureTopics(admin, [{ topic, numPartitions: 6 }]));
    const usable: boolean[] = [];
    const single = new SingleRecordOutput({ kafka, logger, onUsable: (state) => usable.push(state) });
    const transactional = new TransactionalOutput({ kafka, logger, transactionalId: uniqueName('it.single-record.txn') });
    await Promise.all([single.start(), transactional.start()]);
    expect(usable).toEqual([true]);

    const keys = Array.from({ length: 20 }, (_, n) => `message-${n}`);
    for (const key of keys) await single.write(topic, { key: Buffer.from(key), value: Buffer.from(`single ${key}`) });

    // A transaction left open on the partition of the next single write: that write is
    // acknowledged, but a read_committed reader gets it only after the transaction ends.
    let releaseTransaction!: () => void;
    const transactionHeld = new Promise<void>((resolve) => (releaseTransaction = resolve));
    let transactionOpen!: () => void;
    const opened = new Promise<void>((resolve) => (transactionOpen = resolve));
    const transaction = transactional.run(async (open) => {
      await open.send({ topic, messages: [{ key: 'behind', value: 'transactional, committed late' }] });
      transactionOpen();
      await transactionHeld;
    });
    await opened;
    await single.write(topic, { key: Buffer.from('behind'), value: Buffer.from('single, after the open transaction') });

    const seen: Array<{ partition: number; key: string; value: string }> = [];
    const consumer = createConsumer(kafka, uniqueName('it.single-record.reader'), { maxWaitTimeInMs: 100 });
    await consumer.connect();
    await consumer.subscribe({ topic, fromBeginning: true });
    await consumer.run({
      eachMessage: async ({ partition, message }) => {
        seen.push({ partition, key: message.key!.toString(), value: message.value!.toString() });
      },
    });
    try {
      await expect.poll(() => seen.length, { timeout: 30_000 }).toBe(keys.length);
      // Nothing from the open transaction's partition beyond what was committed before it.
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      expect(seen.some((entry) => entry.key === 'behind')).toBe(false);
      releaseTransaction();
      await transaction;
      await expect.poll(() => seen.filter((entry) => entry.key === 'behind').map((entry) => entry.value), { timeout: 30_000 }).toEqual(['transactional, committed late', 'single, after the open transaction']);
      expect(seen.filter((entry) => entry.key === 'behind').every((entry) => entry.partition === partitionOf('behind'))).toBe(true);
      for (const key of keys) {
        const entry = seen.find((candidate) => candidate.key === key);
        expect(entry?.value).toBe(`single ${key}`);
        expect(entry?.partition).toBe(partitionOf(key));
      }
      expect(seen).toHaveLength(keys.length + 2);
    } finally {
      releaseTransaction();
      await consumer.disconnect();
      await Promise.all([single.stop(), transactional.stop()]);
    }
    expect(usable.at(-1)).toBe(false);
    await expect(single.write(topic, { key: Buffer.from('late'), value: Buffer.from('after stop') })).rejects.toThrow(/stopped/);
  });
});
