import { describe, expect, it } from 'vitest';
import { createTopics, readTopic, testKafka, uniqueName } from '@tributary/test/harness';
import { createProducer } from './kafka.js';

describe('coordinator lookups against a real broker', () => {
  it('commits transactions with offsets without a FindCoordinator round trip before each request', { timeout: 60_000 }, async () => {
    const kafka = testKafka();
    const topic = uniqueName('it.coordinators');
    const groupId = uniqueName('it-coordinators-group');
    await createTopics(kafka, [topic], 2);
    const producer = createProducer(kafka, { transactionalId: uniqueName('it-coordinators-tx') });
    let asked: string[] = [];
    producer.on(producer.events.REQUEST, ({ payload }) => asked.push(payload.apiName));
    await producer.connect();
    const transactions = 10;
    const commit = async (n: number) => {
      const transaction = await producer.transaction();
      try {
        await transaction.send({ topic, messages: [{ key: `k${n}`, value: `v${n}` }] });
        await transaction.sendOffsets({ consumerGroupId: groupId, topics: [{ topic, partitions: [{ partition: 0, offset: String(n + 1) }] }] });
        await transaction.commit();
      } catch (error) {
        await transaction.abort();
        throw error;
      }
    };
    try {
      // On a broker that has just started, the first offset commit of a new group can meet
      // NOT_COORDINATOR while the offsets partition loads (kafkajs gives up on it; the services
      // retry the transaction). Counting starts once one has committed.
      for (let attempt = 1; ; attempt++) {
        try {
          await commit(0);
          break;
        } catch (error) {
          if (attempt === 20) throw error;
          await new Promise((resolve) => setTimeout(resolve, 250));
        }
      }
      asked = [];
      for (let n = 1; n <= transactions; n++) await commit(n);
    } finally {
      await producer.disconnect();
    }
    const count = (apiName: string) => asked.filter((name) => name === apiName).length;
    // Every transaction still does its work: the records and the offsets are committed.
    expect(count('EndTxn')).toBe(transactions);
    expect(count('TxnOffsetCommit')).toBe(transactions);
    const records = await readTopic(kafka, topic, { until: (read) => read.length >= transactions + 1 });
    expect(records.map((record) => record.message.value?.toString()).sort()).toEqual(Array.from({ length: transactions + 1 }, (_, n) => `v${n}`).sort());
    const admin = kafka.admin();
    await admin.connect();
    try {
      const [committed] = await admin.fetchOffsets({ groupId, topics: [topic] });
      expect(committed!.partitions.find((p) => p.partition === 0)?.offset).toBe(String(transactions + 1));
    } finally {
      await admin.disconnect();
    }
    // Unfixed kafkajs 2.2.4 asks before every AddPartitionsToTxn, AddOffsetsToTxn,
    // TxnOffsetCommit and EndTxn: 4 per transaction, 40 here. Now both coordinators are
    // known from the first transaction.
    // (kafkajs names the FindCoordinator request by its old name, GroupCoordinator.)
    expect(count('GroupCoordinator')).toBe(0);
  });
});
