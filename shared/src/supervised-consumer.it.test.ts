import { describe, expect, it } from 'vitest';
import { createTopics, eventually, testKafka, testLogger, uniqueName } from '@tributary/test/harness';
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

  it('tells the caller to drop what it read when kafkajs restarts a crashed consumer itself, not only at the next join', { timeout: 60_000 }, async () => {
    const kafka = testKafka();
    const topic = uniqueName('it.supervised-restart');
    await createTopics(kafka, [topic], 1);
    const producer = kafka.producer();
    await producer.connect();
    await producer.send({ topic, messages: [{ value: 'x' }] });
    await producer.disconnect();
    const events: string[] = [];
    const supervised = new SupervisedConsumer({
      kafka,
      groupId: uniqueName('it-supervised-restart-group'),
      logger: testLogger('supervised'),
      name: 'test',
      onReplace: () => events.push('dropped'),
      setup: async (consumer) => {
        consumer.on(consumer.events.GROUP_JOIN, () => events.push('joined'));
        await consumer.subscribe({ topic, fromBeginning: true });
        // Every batch fails, as a transaction does with the broker away: kafkajs retries it,
        // gives up, disconnects (leaving the group) and restarts the consumer.
        await consumer.run({
          eachBatch: async () => {
            throw new Error('transaction failed (injected)');
          },
        });
      },
    });
    await supervised.start();
    try {
      await eventually(() => events.filter((event) => event === 'joined').length >= 2, 'a second join, after kafkajs restarted the consumer', 45_000);
      // Dropped between the crash and the rejoin, not left until the join.
      expect(events.slice(0, 3)).toEqual(['joined', 'dropped', 'joined']);
    } finally {
      await supervised.stop();
    }
  });
});
