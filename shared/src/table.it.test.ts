import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Kafka, Producer } from 'kafkajs';
import { testKafka, testLogger, uniqueName } from '@tributary/test/harness';
import { CONSUMER_DEFAULTS, createProducer, ensureTopics, withAdmin } from './kafka.js';
import { CompactedTopicReader } from './table.js';

const text = (value: string | null) => (value === null ? null : Buffer.from(value));

describe('CompactedTopicReader on a real compacted topic', () => {
  let kafka: Kafka;
  let producer: Producer;
  let topic: string;

  beforeAll(async () => {
    kafka = testKafka();
    topic = uniqueName('it.table');
    await withAdmin(kafka, (admin) =>
      ensureTopics(admin, [{ topic, numPartitions: 2, config: { 'cleanup.policy': 'compact' } }]),
    );
    producer = createProducer(kafka);
    await producer.connect();
  });
  afterAll(async () => {
    await producer.disconnect();
  });

  it('catches up with what exists, then follows changes and deletions', async () => {
    await producer.send({
      topic,
      messages: [
        { key: 'source/a', value: text('a1') },
        { key: 'source/b', value: text('b1') },
        { key: 'source/a', value: text('a2') },
        { key: 'source/c', value: text('c1') },
        { key: 'source/c', value: null },
      ],
    });
    const reader = new CompactedTopicReader<string>({
      kafka,
      topic,
      logger: testLogger(),
      decode: async (value) => value.toString(),
    });
    await reader.start();
    try {
      expect(reader.isCaughtUp()).toBe(true);
      expect(Object.fromEntries(reader.entries())).toEqual({ 'source/a': 'a2', 'source/b': 'b1' });

      const changes: Array<[string, string | undefined, string | undefined]> = [];
      reader.onChange((key, value, previous) => changes.push([key, value, previous]));
      // Written the moment the reader has applied the previous record, so its next fetch has only
      // just begun to wait: the new record must end that wait (the broker answers a waiting fetch
      // as soon as there is data), not be seen only once the wait runs out. A reader that missed
      // it would take the whole fetch wait (CONSUMER_DEFAULTS.maxWaitTimeInMs); this one takes a
      // fetch round trip. Half the wait separates the two without asserting a speed.
      const [primer] = await producer.send({ topic, messages: [{ key: 'source/d', value: text('d1') }] });
      await reader.waitForOffset(primer!.partition, primer!.baseOffset!);
      const started = Date.now();
      const [written] = await producer.send({ topic, messages: [{ key: 'source/b', value: text('b2') }] });
      await reader.waitForOffset(written!.partition, written!.baseOffset!);
      expect(Date.now() - started).toBeLessThan(CONSUMER_DEFAULTS.maxWaitTimeInMs! / 2);
      expect(reader.get('source/b')).toBe('b2');

      const [deleted] = await producer.send({ topic, messages: [{ key: 'source/a', value: null }] });
      await reader.waitForOffset(deleted!.partition, deleted!.baseOffset!);
      expect(reader.get('source/a')).toBeUndefined();
      expect(changes).toEqual([
        ['source/d', 'd1', undefined],
        ['source/b', 'b2', 'b1'],
        ['source/a', undefined, 'a2'],
      ]);
    } finally {
      await reader.stop();
    }
  });

  it('is caught up at once on an empty topic', async () => {
    const empty = uniqueName('it.table.empty');
    await withAdmin(kafka, (admin) => ensureTopics(admin, [{ topic: empty, numPartitions: 1, config: { 'cleanup.policy': 'compact' } }]));
    const reader = new CompactedTopicReader<string>({ kafka, topic: empty, logger: testLogger(), decode: async (v) => v.toString() });
    await reader.start();
    expect(reader.size).toBe(0);
    await reader.stop();
  });
});
