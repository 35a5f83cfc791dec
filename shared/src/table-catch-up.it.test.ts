import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Kafka, Producer } from 'kafkajs';
import { eventually, testKafka, testLogger, uniqueName } from '@tributary/test/harness';
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

  /** The topic's committed end: the sum over partitions of the offsets a read_committed reader may reach. */
  const committedEnd = () => withAdmin(kafka, async (admin) => (await admin.fetchTopicOffsets(topic)).reduce((sum, { high }) => sum + Number(high), 0));

  /**
   * The broker writes a transaction's commit markers after EndTxn has answered, so at first the
   * transaction may still look open to a check (which rightly does not wait for it): wait until
   * the committed end has moved past `records` records and a marker.
   */
  async function visible(before: number, records: number): Promise<void> {
    await eventually(async () => (await committedEnd()) >= before + records + 1, 'the commit visible at the end of the topic', 10_000);
  }

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
      const beforeEfg = await committedEnd();
      await inTransaction(['e', 'f', 'g'], 'commit');
      await visible(beforeEfg, 3);
      await reader.catchUpToEnd();
      expect(seen.slice(4).sort()).toEqual(['e=e', 'f=f', 'g=g']);

      // An open transaction is not waited for: the end is read with read_committed.
      const beforePending = await committedEnd();
      const open = await transactional.transaction();
      await open.send({ topic, messages: [{ key: 'pending', value: text('pending') }] });
      await reader.catchUpToEnd(5_000);
      expect(seen).not.toContain('pending=pending');
      await open.commit();
      await visible(beforePending, 1);
      await reader.catchUpToEnd();
      expect(seen).toContain('pending=pending');
    } finally {
      await reader.stop();
    }
  });

  it('reads end offsets through one admin connection however often it is asked, and connects afresh after a failure', async () => {
    let admins = 0;
    let failNext = false;
    // The real client, counting the admin clients made and failing one request when told to.
    const counting = Object.create(kafka) as Kafka;
    counting.admin = (...args: Parameters<Kafka['admin']>) => {
      admins++;
      const admin = kafka.admin(...args);
      const fetchTopicOffsets = admin.fetchTopicOffsets.bind(admin);
      admin.fetchTopicOffsets = async (name) => {
        if (failNext) {
          failNext = false;
          throw new Error('the connection broke');
        }
        return fetchTopicOffsets(name);
      };
      return admin;
    };
    const reader = new CompactedTopicReader<string>({ kafka: counting, topic, logger: testLogger(), decode: async (value) => value.toString(), materialize: false });
    await reader.start();
    try {
      expect(admins).toBe(1);
      for (let check = 0; check < 5; check++) {
        await inTransaction([`again-${check}`], 'commit');
        await reader.catchUpToEnd(5_000);
      }
      // start's own, then one kept for every check since.
      expect(admins).toBe(2);
      failNext = true;
      await expect(reader.catchUpToEnd(5_000)).rejects.toThrow(/the connection broke/);
      await reader.catchUpToEnd(5_000);
      expect(admins).toBe(3);
    } finally {
      await reader.stop();
    }
  });

  it('gives up within its timeout when the end offsets cannot be read, and does not ask that connection again', async () => {
    let admins = 0;
    const silent = Object.create(kafka) as Kafka;
    silent.admin = () => {
      admins++;
      return { connect: async () => undefined, disconnect: async () => undefined, fetchTopicOffsets: () => new Promise(() => undefined) } as unknown as ReturnType<Kafka['admin']>;
    };
    const reader = new CompactedTopicReader<string>({ kafka: silent, topic, logger: testLogger(), decode: async (value) => value.toString() });
    const startedAt = Date.now();
    await expect(reader.catchUpToEnd(300)).rejects.toThrow(/end offsets of .* did not finish within 0.3 s/);
    expect(Date.now() - startedAt).toBeLessThan(2_000);
    await expect(reader.catchUpToEnd(300)).rejects.toThrow(/end offsets of .* did not finish within 0.3 s/);
    expect(admins).toBe(2);
  });
});
