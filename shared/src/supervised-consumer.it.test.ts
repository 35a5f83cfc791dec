import { describe, expect, it } from 'vitest';
import { createTopics, testKafka, testLogger, uniqueName } from '@tributary/test/harness';
import { SupervisedConsumer } from './supervised-consumer.js';

describe('a supervised consumer against a real broker', () => {
  it('pauses, resumes and seeks while running, and leaves them to the restart while kafkajs restarts it', { timeout: 60_000 }, async () => {
    const kafka = testKafka();
    const topic = uniqueName('it.supervised');
    await createTopics(kafka, [topic], 2);
    let joined: () => void = () => undefined;
    const joinedOnce = new Promise<void>((resolve) => (joined = resolve));
    const supervised = new SupervisedConsumer({
      kafka,
      groupId: uniqueName('it-supervised-group'),
      logger: testLogger('supervised'),
      name: 'test',
      setup: async (consumer) => {
        consumer.on(consumer.events.GROUP_JOIN, () => joined());
        await consumer.subscribe({ topic, fromBeginning: true });
        await consumer.run({ eachBatch: async () => undefined });
      },
    });
    await supervised.start();
    try {
      await joinedOnce;
      expect(supervised.pause([{ topic, partitions: [0] }])).toBe(true);
      expect(supervised.seek({ topic, partition: 0, offset: '0' })).toBe(true);
      expect(supervised.resume([{ topic, partitions: [0] }])).toBe(true);

      // What kafkajs does after a crash it restarts (consumer/index.js: stop, then start after
      // retryTime): the same consumer object, without a group in between.
      const consumer = supervised.current!;
      await consumer.stop();
      expect(() => consumer.resume([{ topic, partitions: [0] }]), 'kafkajs itself throws here').toThrow(/not initialized/);
      expect(supervised.resume([{ topic, partitions: [0] }])).toBe(false);
      expect(supervised.pause([{ topic, partitions: [1] }])).toBe(false);
      expect(supervised.seek({ topic, partition: 1, offset: '0' })).toBe(false);
    } finally {
      await supervised.stop();
    }
  });
});
