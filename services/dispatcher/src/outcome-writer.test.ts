import type { Kafka } from 'kafkajs';
import { Registry } from 'prom-client';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createLogger, createReadiness, type TransactionalOutput } from '@tributary/shared';
import { PartitionLedger } from './ledger.js';
import { createDispatcherMetrics } from './metrics.js';
import { OutcomeWriter } from './outcome-writer.js';

const INTERVAL_MS = 250;
const MAX_TRANSACTION_BYTES = 8 * 1024 * 1024;

/** Transactions as the writer runs them, the broker's side left out: what is tested is when it commits, not Kafka. */
function recordingOutput(): { output: TransactionalOutput; transactions: number[] } {
  const transactions: number[] = [];
  const transaction = {
    sendBatch: ({ topicMessages }: { topicMessages: Array<{ messages: unknown[] }> }) => {
      transactions[transactions.length - 1]! += topicMessages.reduce((n, { messages }) => n + messages.length, 0);
      return Promise.resolve([]);
    },
    sendOffsets: () => Promise.resolve(),
  };
  const output = {
    run: async (body: (t: typeof transaction) => Promise<void>) => {
      transactions.push(0);
      await body(transaction);
    },
  };
  // Only `run` is used on the success path this test takes.
  return { output: output as unknown as TransactionalOutput, transactions };
}

function writer(ledgers: PartitionLedger[], output: TransactionalOutput): OutcomeWriter {
  return new OutcomeWriter({
    output,
    kafka: {} as Kafka,
    logger: createLogger({ service: 'test', level: 'silent' }),
    metrics: createDispatcherMetrics({ registry: new Registry() } as Parameters<typeof createDispatcherMetrics>[0], []),
    readiness: createReadiness(),
    intervalMs: INTERVAL_MS,
    maxTransactionBytes: MAX_TRANSACTION_BYTES,
    ledgers: () => ledgers.map((ledger) => ({ ledger, groupId: 'g' })),
    extras: () => [],
    delayBeforeCommitMs: 0,
    restoreExtras: () => undefined,
    onCommitted: () => undefined,
    onFatal: (error) => {
      throw error;
    },
  });
}

/** Stops the writer under fake timers, which its sleeps wait on. */
async function stopped(outcomes: OutcomeWriter): Promise<void> {
  const stopping = outcomes.stop(0);
  await vi.advanceTimersByTimeAsync(10 * INTERVAL_MS);
  await stopping;
}

describe('OutcomeWriter', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('commits back to back while more than a transaction is staged, not one transaction an interval', async () => {
    vi.useFakeTimers();
    // 64 retry records of 1 MiB (a burst of large messages to a failing destination): 8 transactions' worth.
    const ledgers = [0, 1].map((partition) => new PartitionLedger('deliveries', partition, 0n));
    for (const ledger of ledgers) {
      for (let offset = 0n; offset < 32n; offset++) {
        ledger.read(offset);
        ledger.settle(offset, [{ topic: 'retry', key: `k${offset}`, value: Buffer.alloc(1024 * 1024) }]);
      }
    }
    const { output, transactions } = recordingOutput();
    const outcomes = writer(ledgers, output);
    outcomes.start();
    await vi.advanceTimersByTimeAsync(INTERVAL_MS - 1);
    expect(transactions.reduce((a, b) => a + b, 0)).toBe(64);
    expect(transactions.length).toBeGreaterThanOrEqual(8);
    expect(ledgers.map((ledger) => ledger.stagedBytes)).toEqual([0, 0]);
    await stopped(outcomes);
  });

  it('waits out the interval after a transaction that took everything ready', async () => {
    vi.useFakeTimers();
    const ledger = new PartitionLedger('deliveries', 0, 0n);
    const settle = (offset: bigint): void => {
      ledger.read(offset);
      ledger.settle(offset, [{ topic: 'attempts', key: `k${offset}`, value: Buffer.alloc(100) }]);
    };
    settle(0n);
    const { output, transactions } = recordingOutput();
    const outcomes = writer([ledger], output);
    outcomes.start();
    await vi.advanceTimersByTimeAsync(1);
    settle(1n);
    outcomes.wake();
    await vi.advanceTimersByTimeAsync(INTERVAL_MS - 10);
    expect(transactions).toEqual([1]);
    await vi.advanceTimersByTimeAsync(20);
    expect(transactions).toEqual([1, 1]);
    await stopped(outcomes);
  });
});
