import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Kafka, Producer } from 'kafkajs';
import { eventually, testKafka, testLogger, uniqueName } from '@tributary/test/harness';
import { createProducer, ensureTopics, withAdmin } from './kafka.js';
import { CompactedTopicReader } from './table.js';

const text = (value: string) => Buffer.from(value);

// The admin-connection cases (a request that fails, one that never answers) inject faults a
// real broker does not produce on request: they are unit tests, in table-catch-up.test.ts.

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

  /** Writes each key (with itself as value, or the value given) in one transaction. */
  async function inTransaction(records: Array<string | [key: string, value: string]>, outcome: 'commit' | 'abort'): Promise<void> {
    const transaction = await transactional.transaction();
    await transaction.send({ topic, messages: records.map((record) => (typeof record === 'string' ? { key: record, value: text(record) } : { key: record[0], value: text(record[1]) })) });
    await (outcome === 'commit' ? transaction.commit() : transaction.abort());
  }

  it('passes every committed record to listeners, none of an aborted transaction, and keeps no map', async () => {
    await inTransaction(['a', 'b', 'c'], 'commit');
    await inTransaction(['aborted-1', 'aborted-2'], 'abort');
    await inTransaction(['d'], 'commit');
    // 'a' again, with another value: a reader that kept a map would pass the first as `previous`.
    // Each transaction of the producer waits for the one before to be finished, markers and all;
    // the last must be visible before the reader starts, which reads to the committed end.
    const beforeAgain = await committedEnd();
    await inTransaction([['a', 'a again']], 'commit');
    await visible(beforeAgain, 1);

    const seen: string[] = [];
    // What each call was given, checked after the read: the reader catches and logs a listener's errors.
    const calls: Array<[key: string, value: string | undefined, previous: string | undefined]> = [];
    const reader = new CompactedTopicReader<string>({ kafka, topic, logger: testLogger(), decode: async (value) => value.toString(), materialize: false });
    reader.onChange((key, value, previous) => {
      calls.push([key, value, previous]);
      seen.push(`${key}=${value}`);
    });
    await reader.start();
    try {
      expect(seen.sort()).toEqual(['a=a', 'a=a again', 'b=b', 'c=c', 'd=d']);
      // One partition per key, so 'a' arrives in the order written; with no map, no `previous` for either.
      expect(calls.filter(([key]) => key === 'a')).toStrictEqual([
        ['a', 'a', undefined],
        ['a', 'a again', undefined],
      ]);
      expect(calls.map(([, , previous]) => previous)).toStrictEqual(calls.map(() => undefined));
      expect(reader.size).toBe(0);
      expect(reader.get('a')).toBeUndefined();

      // Another process commits; catchUpToEnd returns only once this reader has it —
      // the end is a transaction marker, which the reader must count as read.
      const beforeEfg = await committedEnd();
      await inTransaction(['e', 'f', 'g'], 'commit');
      await visible(beforeEfg, 3);
      await reader.catchUpToEnd();
      expect(seen.slice(5).sort()).toEqual(['e=e', 'f=f', 'g=g']);

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
});
