/**
 * A table reader whose consumer joins its group again — here kafkajs restarting it after a
 * batch failed past its retries, as a broker outage does — goes on after what it applied. It
 * used to read the topic again from its start (its group never commits): the values of the
 * replay took the table back in time while catchUpToEnd went on saying it was current, and
 * the router's dedup topic took minutes to read again with routing waiting on it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Kafka, Producer } from 'kafkajs';
import { eventually, testKafka, testLogger, uniqueName } from '@tributary/test/harness';
import { createProducer, ensureTopics, withAdmin } from './kafka.js';
import { CompactedTopicReader } from './table.js';

describe('CompactedTopicReader after its consumer restarts', () => {
  let kafka: Kafka;
  let producer: Producer;
  let topic: string;

  beforeAll(async () => {
    kafka = testKafka();
    topic = uniqueName('it.table-resume');
    await withAdmin(kafka, (admin) => ensureTopics(admin, [{ topic, numPartitions: 1, config: { 'cleanup.policy': 'compact' } }]));
    producer = createProducer(kafka);
    await producer.connect();
  });
  afterAll(async () => {
    await producer.disconnect();
  });

  it('resumes after what it applied: no old value is applied again', { timeout: 90_000 }, async () => {
    await producer.send({ topic, messages: [{ key: 'destination/d', value: Buffer.from('v1') }] });
    await producer.send({ topic, messages: [{ key: 'destination/d', value: Buffer.from('v2') }] });

    // The record "blocker" fails to decode as a transient error would (the registry away)
    // until `blocked` is cleared: kafkajs retries its batch, gives up, and restarts the consumer.
    let blocked = true;
    let refusals = 0;
    const reader = new CompactedTopicReader<string>({
      kafka,
      topic,
      logger: testLogger(),
      decode: async (value) => {
        const text = value.toString();
        if (text === 'blocker' && blocked) {
          refusals++;
          throw new Error('registry away (injected)');
        }
        return text;
      },
    });
    const seen: string[] = [];
    reader.onChange((key, value) => {
      if (key === 'destination/d') seen.push(value ?? '(deleted)');
    });
    await reader.start();
    try {
      expect(seen).toEqual(['v1', 'v2']);

      await producer.send({ topic, messages: [{ key: 'other/x', value: Buffer.from('blocker') }] });
      // kafkajs's retries of the batch (8, backing off to 5 s) run out and it restarts the consumer.
      await eventually(() => refusals >= 9, 'the blocked batch retried past kafkajs retries', 60_000);
      blocked = false;
      await producer.send({ topic, messages: [{ key: 'destination/d', value: Buffer.from('v3') }] });
      await reader.catchUpToEnd(30_000);

      expect(reader.get('other/x')).toBe('blocker');
      expect(reader.get('destination/d')).toBe('v3');
      // Without the resume, the restart replayed v1 and v2 after v2: the table went back in time.
      expect(seen).toEqual(['v1', 'v2', 'v3']);
    } finally {
      await reader.stop();
    }
  });
});
