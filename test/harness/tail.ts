/**
 * Follows a topic for the length of a test: every record (read_committed) from the
 * beginning on, decoded, in arrival order, with a way to wait for a condition on them.
 */
import type { Kafka } from 'kafkajs';
import { createConsumer, SHORT_READER_WAIT_MS } from '@tributary/shared';
import { uniqueName } from './index.js';

export interface TopicTail<T> {
  readonly records: T[];
  /** Resolves with the records once `condition` holds; rejects after `timeoutMs`. */
  waitFor(condition: (records: T[]) => boolean, timeoutMs?: number, what?: string): Promise<T[]>;
  stop(): Promise<void>;
}

export async function tailTopic<T>(kafka: Kafka, topic: string, decode: (value: Buffer) => Promise<T>): Promise<TopicTail<T>> {
  const records: T[] = [];
  const waiters = new Set<() => void>();
  const consumer = createConsumer(kafka, uniqueName('test-tail'), { readUncommitted: false, maxWaitTimeInMs: SHORT_READER_WAIT_MS });
  await consumer.connect();
  await consumer.subscribe({ topic, fromBeginning: true });
  await consumer.run({
    autoCommit: false,
    eachMessage: async ({ message }) => {
      if (!message.value) return;
      records.push(await decode(message.value));
      for (const wake of waiters) wake();
    },
  });
  return {
    records,
    waitFor(condition, timeoutMs = 15_000, what = 'condition') {
      if (condition(records)) return Promise.resolve(records);
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`${what} not met on ${topic} within ${timeoutMs} ms (${records.length} records seen)`));
        }, timeoutMs);
        const check = (): void => {
          if (!condition(records)) return;
          clearTimeout(timer);
          waiters.delete(check);
          resolve(records);
        };
        waiters.add(check);
      });
    },
    stop: () => consumer.disconnect(),
  };
}
