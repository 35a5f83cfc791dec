import { describe, expect, it } from 'vitest';
import { testKafka, uniqueName } from '@tributary/test/harness';
import { createProducer, ensureTopics, withAdmin } from './kafka.js';

describe('ensureTopics against a real broker', () => {
  it('lets every service that starts at once create the same topics, each then usable at once', { timeout: 60_000 }, async () => {
    const kafka = testKafka();
    const specs = Array.from({ length: 6 }, (_, n) => ({ topic: uniqueName(`it.ensure.${n}`), numPartitions: 3 }));
    // Four services racing, as `npm start` starts them: none may fail, and every topic must
    // be ready for a producer as soon as the call returns.
    const created = await Promise.all(Array.from({ length: 4 }, () => withAdmin(kafka, (admin) => ensureTopics(admin, specs))));
    expect(new Set(created.flat())).toEqual(new Set(specs.map((spec) => spec.topic)));

    const metadata = await withAdmin(kafka, (admin) => admin.fetchTopicMetadata({ topics: specs.map((spec) => spec.topic) }));
    for (const topic of metadata.topics) {
      expect(topic.partitions).toHaveLength(3);
      for (const partition of topic.partitions) expect(partition.leader).toBeGreaterThanOrEqual(0);
    }
    const producer = createProducer(kafka);
    await producer.connect();
    try {
      await producer.send({ topic: specs[0]!.topic, messages: [{ key: 'k', value: 'v' }] });
    } finally {
      await producer.disconnect();
    }
    // Existing topics are left alone: nothing to create the second time.
    expect(await withAdmin(kafka, (admin) => ensureTopics(admin, specs))).toEqual([]);
  });
});

describe('transactions against a real broker', () => {
  it('commits offsets-only transactions back to back: AddOffsetsToTxn waits out the previous commit', { timeout: 60_000 }, async () => {
    const kafka = testKafka();
    const topic = uniqueName('it.offsets-only');
    await withAdmin(kafka, (admin) => ensureTopics(admin, [{ topic, numPartitions: 1 }]));
    const producer = createProducer(kafka, { transactionalId: uniqueName('it.offsets-only.txn') });
    const consumerGroupId = uniqueName('it.offsets-only.group');
    await producer.connect();
    const failures: string[] = [];
    try {
      // The indexer's transactions: offsets only, the next begun as soon as the last commits.
      // The coordinator answers CONCURRENT_TRANSACTIONS until the previous markers are
      // written; kafkajs alone threw it for about a third of these.
      for (let offset = 1; offset <= 100; offset++) {
        const transaction = await producer.transaction();
        try {
          await transaction.sendOffsets({ consumerGroupId, topics: [{ topic, partitions: [{ partition: 0, offset: String(offset) }] }] });
          await transaction.commit();
        } catch (error) {
          failures.push((error as { type?: string }).type ?? String(error));
          await transaction.abort().catch(() => undefined);
        }
      }
    } finally {
      await producer.disconnect();
    }
    expect(failures).toEqual([]);
  });
});
