/**
 * CompactedTopicReader.catchUpToEnd's handling of its admin connection, with a fake Kafka
 * client whose admin fails or hangs when told to: faults a real broker does not produce on
 * request. The reader is never started, and the fake topic's partitions are empty (high ==
 * low), so catchUpToEnd has no offset to wait for and its outcome is the admin's alone. Reading
 * a real topic through the kept connection is table-catch-up.it.test.ts.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { Admin, Kafka } from 'kafkajs';
import { createLogger } from './logger.js';
import { CompactedTopicReader } from './table.js';

const logger = createLogger({ service: 'test', level: 'silent' });

/** What was asked of one admin client the fake Kafka made. */
interface FakeAdmin {
  connects: number;
  disconnects: number;
  fetches: number;
}

/**
 * A Kafka client whose admin() makes fake admins. fetchTopicOffsets answers two empty
 * partitions, or, for the `fault` in force when it is called, throws or never answers.
 */
function fakeKafka() {
  const admins: FakeAdmin[] = [];
  const control = { fault: 'none' as 'none' | 'fail-next' | 'hang' };
  const kafka = {
    admin: () => {
      const made: FakeAdmin = { connects: 0, disconnects: 0, fetches: 0 };
      admins.push(made);
      return {
        connect: async () => void made.connects++,
        disconnect: async () => void made.disconnects++,
        fetchTopicOffsets: async () => {
          made.fetches++;
          if (control.fault === 'hang') return new Promise(() => undefined);
          if (control.fault === 'fail-next') {
            control.fault = 'none';
            throw new Error('the connection broke (injected)');
          }
          return [
            { partition: 0, offset: '7', high: '7', low: '7' },
            { partition: 1, offset: '0', high: '0', low: '0' },
          ];
        },
      } as unknown as Admin;
    },
  } as unknown as Kafka;
  return { kafka, admins, control };
}

const reader = (kafka: Kafka) => new CompactedTopicReader<string>({ kafka, topic: 'config', logger, decode: async (value) => value.toString(), materialize: false });

afterEach(() => {
  vi.useRealTimers();
});

describe('CompactedTopicReader.catchUpToEnd and its admin connection', () => {
  it('reads end offsets through one admin connection however often it is asked', async () => {
    const { kafka, admins } = fakeKafka();
    const table = reader(kafka);
    for (let check = 0; check < 5; check++) await table.catchUpToEnd(5_000);
    expect(admins).toEqual([{ connects: 1, disconnects: 0, fetches: 5 }]);
    await table.stop();
    expect(admins).toEqual([{ connects: 1, disconnects: 1, fetches: 5 }]);
  });

  it('when a request on the kept connection fails (injected), rejects, drops that connection and connects afresh next time', async () => {
    const { kafka, admins, control } = fakeKafka();
    const table = reader(kafka);
    await table.catchUpToEnd(5_000);
    control.fault = 'fail-next';
    await expect(table.catchUpToEnd(5_000)).rejects.toThrow(/the connection broke \(injected\)/);
    expect(admins).toEqual([{ connects: 1, disconnects: 1, fetches: 2 }]);
    await table.catchUpToEnd(5_000);
    await table.catchUpToEnd(5_000);
    expect(admins).toEqual([
      { connects: 1, disconnects: 1, fetches: 2 },
      { connects: 1, disconnects: 0, fetches: 2 },
    ]);
    await table.stop();
  });

  it('when fetchTopicOffsets never answers (injected), gives up at its timeout and does not ask that connection again', async () => {
    vi.useFakeTimers();
    const { kafka, admins, control } = fakeKafka();
    const table = reader(kafka);
    control.fault = 'hang';

    let outcome: unknown;
    const first = table.catchUpToEnd(300).then(
      () => (outcome = 'resolved'),
      (error: unknown) => (outcome = error),
    );
    // Not before its timeout: the reader waits for the answer that long (and only that long).
    await vi.advanceTimersByTimeAsync(299);
    expect(outcome).toBeUndefined();
    await vi.advanceTimersByTimeAsync(1);
    await first;
    expect(outcome).toBeInstanceOf(Error);
    expect((outcome as Error).message).toMatch(/end offsets of config did not finish within 0.3 s/);
    // The connection that did not answer is dropped...
    expect(admins).toEqual([{ connects: 1, disconnects: 1, fetches: 1 }]);

    // ...and the next call asks a new one, which gives up the same way.
    const second = table.catchUpToEnd(300);
    const rejected = expect(second).rejects.toThrow(/end offsets of config did not finish within 0.3 s/);
    await vi.advanceTimersByTimeAsync(300);
    await rejected;
    expect(admins).toEqual([
      { connects: 1, disconnects: 1, fetches: 1 },
      { connects: 1, disconnects: 1, fetches: 1 },
    ]);
  });
});
