import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Kafka, Producer } from 'kafkajs';
import { testKafka, testLogger, uniqueName } from '@tributary/test/harness';
import { createProducer, ensureTopics, withAdmin } from './kafka.js';
import { CompactedTopicReader } from './table.js';

const text = (value: string) => Buffer.from(value);

describe('CompactedTopicReader on a transactional topic: catchUpToEnd and materialize: false', () => {
  let kafka: Kafka;
  let transactional: Producer;
  let topic: string;

  beforeAll(async () => {
    kafka = testKafka();
    topic = uniqueName('it.table.txn');
    await withAdmin(kafka, (admin) => ensureTopics(admin, [{ topic, numPartitions: 2 }]));
    transactional = createProducer(kafka, { transactionalId: uniqueName('it.table.txn.producer') });
    await transactional.connect();
  });
  afterAll(async () => {
    await transactional.disconnect();
  });

  async function inTransaction(keys: string[], outcome: 'commit' | 'abort'): Promise<void> {
    const transaction = await transactional.transaction();
    await transaction.send({ topic, messages: keys.map((key) => ({ key, value: text(key) })) });
    await (outcome === 'commit' ? transaction.commit() : transaction.abort());
  }

  it('passes every committed record to listeners, none of an aborted transaction, and keeps no map', async () => {
    await inTransaction(['a', 'b', 'c'], 'commit');
    await inTransaction(['aborted-1', 'aborted-2'], 'abort');
    await inTransaction(['d'], 'commit');

    const seen: string[] = [];
    const reader = new CompactedTopicReader<string>({ kafka, topic, logger: testLogger(), decode: async (value) => value.toString(), materialize: false });
    reader.onChange((key, value, previous) => {
      expect(previous).toBeUndefined();
      seen.push(`${key}=${value}`);
    });
    await reader.start();
    try {
      expect(seen.sort()).toEqual(['a=a', 'b=b', 'c=c', 'd=d']);
      expect(reader.size).toBe(0);
      expect(reader.get('a')).toBeUndefined();

      // Another process commits; catchUpToEnd returns only once this reader has it —
      // the end is a transaction marker, which the reader must count as read.
      await inTransaction(['e', 'f', 'g'], 'commit');
      await reader.catchUpToEnd();
      expect(seen.slice(4).sort()).toEqual(['e=e', 'f=f', 'g=g']);

      // An open transaction is not waited for: the end is read with read_committed.
      const open = await transactional.transaction();
      await open.send({ topic, messages: [{ key: 'pending', value: text('pending') }] });
      await reader.catchUpToEnd(5_000);
      expect(seen).not.toContain('pending=pending');
      await open.commit();
      await reader.catchUpToEnd();
      expect(seen).toContain('pending=pending');
    } finally {
      await reader.stop();
    }
  });
});
