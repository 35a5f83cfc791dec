import { afterEach, describe, expect, it, vi } from 'vitest';
import { promiseState } from '@tributary/test/harness/promise-state';
import {
  BatcherClosedError,
  BatcherFullError,
  ProduceBatcher,
  ProduceFailedError,
  ProduceTimeoutError,
  type ProduceRecord,
  type TransactionReport,
} from './produce-batcher.js';

const record = (label: string, bytes = 10): ProduceRecord => ({ key: Buffer.from(label), value: Buffer.alloc(bytes - label.length) });
const labels = (records: ProduceRecord[]) => records.map((r) => r.key.toString());

/** A send function whose transactions the test finishes by hand. */
function controlledSend() {
  const transactions: Array<{ records: ProduceRecord[]; commit(): void; fail(error: Error): void }> = [];
  const send = (records: ProduceRecord[]) =>
    new Promise<void>((resolve, reject) => transactions.push({ records, commit: resolve, fail: reject }));
  return { send, transactions };
}

/** A request whose outcome the test does not look at: its rejection (a timeout after the test) is not an unhandled one. */
const settledLater = (outcome: Promise<void>) => void outcome.catch(() => undefined);

/** Lets promise callbacks run. */
const settle = () => new Promise((resolve) => setImmediate(resolve));


afterEach(() => {
  vi.useRealTimers();
});

describe('ProduceBatcher', () => {
  it('says a transaction stalled once it is in flight for the timeout, and says so no more when it ends', async () => {
    vi.useFakeTimers();
    const { send, transactions } = controlledSend();
    const told: boolean[] = [];
    const batcher = new ProduceBatcher({ send, maxRecords: 100, maxBytes: 10_000, timeoutMs: 1_000, maxPendingBytes: 1e9, onStalled: (stalled) => told.push(stalled) });
    const first = promiseState(batcher.submit([record('a')]));
    await vi.advanceTimersByTimeAsync(999);
    expect(told).toEqual([]);
    await vi.advanceTimersByTimeAsync(1);
    expect(told).toEqual([true]);
    expect(first.value).toBeInstanceOf(ProduceTimeoutError);
    transactions[0]!.fail(new Error('broker away'));
    await vi.advanceTimersByTimeAsync(0);
    expect(told).toEqual([true, false]);
    // A transaction that ends in time says nothing.
    const second = promiseState(batcher.submit([record('b')]));
    transactions[1]!.commit();
    await vi.advanceTimersByTimeAsync(5_000);
    expect(second.value).toBe('committed');
    expect(told).toEqual([true, false]);
  });

  it('starts a transaction at once when none is in flight', async () => {
    const { send, transactions } = controlledSend();
    const batcher = new ProduceBatcher({ send, maxRecords: 100, maxBytes: 10_000, timeoutMs: 10_000, maxPendingBytes: 1e9 });
    const first = promiseState(batcher.submit([record('a1'), record('a2')]));
    expect(transactions).toHaveLength(1);
    expect(labels(transactions[0]!.records)).toEqual(['a1', 'a2']);
    transactions[0]!.commit();
    await settle();
    expect(first.value).toBe('committed');
  });

  it('takes one request of each party in turn, so a party with a long queue does not hold another back', async () => {
    const { send, transactions } = controlledSend();
    const batcher = new ProduceBatcher({ send, maxRecords: 4, maxBytes: 10_000, timeoutMs: 10_000, maxPendingBytes: 1e9 });
    settledLater(batcher.submit([record('first')], 'flood'));
    // While that transaction is in flight: six flood requests of two records (three transactions' worth), then one of another source.
    for (let index = 1; index <= 6; index++) settledLater(batcher.submit([record(`f${index}a`), record(`f${index}b`)], 'flood'));
    const healthy = promiseState(batcher.submit([record('h1')], 'healthy'));
    const later = promiseState(batcher.submit([record('h2')], 'healthy'));
    transactions[0]!.commit();
    await settle();
    // In arrival order it would have waited for the three transactions in front of it.
    expect(labels(transactions[1]!.records)).toEqual(['f1a', 'f1b', 'h1']);
    transactions[1]!.commit();
    await settle();
    expect(healthy.value).toBe('committed');
    expect(labels(transactions[2]!.records)).toEqual(['f2a', 'f2b', 'h2']);
    transactions[2]!.commit();
    await settle();
    expect(later.value).toBe('committed');
    // The flood's own requests keep their order.
    expect(labels(transactions[3]!.records)).toEqual(['f3a', 'f3b', 'f4a', 'f4b']);
  });

  it('withdraws an expired request from its party’s turn', async () => {
    vi.useFakeTimers();
    const { send, transactions } = controlledSend();
    const batcher = new ProduceBatcher({ send, maxRecords: 100, maxBytes: 10_000, timeoutMs: 1_000, maxPendingBytes: 1e9 });
    settledLater(batcher.submit([record('a')], 'x'));
    const expired = promiseState(batcher.submit([record('b')], 'y'));
    await vi.advanceTimersByTimeAsync(1_000);
    expect(expired.value).toBeInstanceOf(ProduceTimeoutError);
    expect(batcher.queued).toBe(0);
    settledLater(batcher.submit([record('c')], 'y'));
    transactions[0]!.commit();
    await vi.advanceTimersByTimeAsync(0);
    expect(labels(transactions[1]!.records)).toEqual(['c']);
  });

  it('groups the requests that arrive during a transaction into the next one', async () => {
    const { send, transactions } = controlledSend();
    const reports: TransactionReport[] = [];
    const batcher = new ProduceBatcher({ send, maxRecords: 100, maxBytes: 10_000, timeoutMs: 10_000, maxPendingBytes: 1e9, onTransaction: (r) => reports.push(r) });
    const a = promiseState(batcher.submit([record('a1')]));
    const b = promiseState(batcher.submit([record('b1'), record('b2')]));
    const c = promiseState(batcher.submit([record('c1')]));
    expect(transactions).toHaveLength(1);
    expect(batcher.queued).toBe(2);

    transactions[0]!.commit();
    await settle();
    expect(a.value).toBe('committed');
    expect(b.value).toBe('pending');
    expect(transactions).toHaveLength(2);
    expect(labels(transactions[1]!.records)).toEqual(['b1', 'b2', 'c1']);

    transactions[1]!.commit();
    await settle();
    expect([b.value, c.value]).toEqual(['committed', 'committed']);
    expect(reports.map(({ records, requests, bytes }) => ({ records, requests, bytes }))).toEqual([
      { records: 1, requests: 1, bytes: 10 },
      { records: 3, requests: 2, bytes: 30 },
    ]);
  });

  it('fails every request of an aborted transaction, and only those', async () => {
    const { send, transactions } = controlledSend();
    const reports: TransactionReport[] = [];
    const batcher = new ProduceBatcher({ send, maxRecords: 100, maxBytes: 10_000, timeoutMs: 10_000, maxPendingBytes: 1e9, onTransaction: (r) => reports.push(r) });
    const first = promiseState(batcher.submit([record('a')]));
    const second = promiseState(batcher.submit([record('b')]));
    const third = promiseState(batcher.submit([record('c')]));
    transactions[0]!.commit();
    await settle();
    const abort = new Error('transaction aborted: broker fenced');
    transactions[1]!.fail(abort);
    await settle();
    expect(first.value).toBe('committed');
    for (const failed of [second, third]) {
      expect(failed.value).toBeInstanceOf(ProduceFailedError);
      expect((failed.value as Error).cause).toBe(abort);
    }
    expect(reports[1]!.error).toBe(abort);

    // The batcher goes on with the next request.
    const fourth = promiseState(batcher.submit([record('d')]));
    expect(labels(transactions[2]!.records)).toEqual(['d']);
    transactions[2]!.commit();
    await settle();
    expect(fourth.value).toBe('committed');
  });

  it('fails the requests of a send that rejects at once (producer not connected)', async () => {
    const batcher = new ProduceBatcher({
      send: async () => {
        throw new Error('not connected');
      },
      maxRecords: 100,
      maxBytes: 10_000,
      timeoutMs: 10_000, maxPendingBytes: 1e9,
    });
    await expect(batcher.submit([record('a')])).rejects.toBeInstanceOf(ProduceFailedError);
  });

  it('caps a transaction by records without splitting a request', async () => {
    const { send, transactions } = controlledSend();
    const batcher = new ProduceBatcher({ send, maxRecords: 3, maxBytes: 10_000, timeoutMs: 10_000, maxPendingBytes: 1e9 });
    batcher.submit([record('x')]);
    batcher.submit([record('a1'), record('a2')]);
    batcher.submit([record('b1'), record('b2')]);
    batcher.submit([record('c1')]);
    transactions[0]!.commit();
    await settle();
    expect(labels(transactions[1]!.records)).toEqual(['a1', 'a2']);
    transactions[1]!.commit();
    await settle();
    expect(labels(transactions[2]!.records)).toEqual(['b1', 'b2', 'c1']);
  });

  it('caps a transaction by bytes, and gives an oversized request a transaction of its own', async () => {
    const { send, transactions } = controlledSend();
    const batcher = new ProduceBatcher({ send, maxRecords: 100, maxBytes: 25, timeoutMs: 10_000, maxPendingBytes: 1e9 });
    batcher.submit([record('x')]);
    batcher.submit([record('big', 40)]);
    batcher.submit([record('a', 10)]);
    batcher.submit([record('b', 10)]);
    batcher.submit([record('c', 10)]);
    transactions[0]!.commit();
    await settle();
    expect(labels(transactions[1]!.records)).toEqual(['big']);
    transactions[1]!.commit();
    await settle();
    expect(labels(transactions[2]!.records)).toEqual(['a', 'b']);
    transactions[2]!.commit();
    await settle();
    expect(labels(transactions[3]!.records)).toEqual(['c']);
  });

  it('withdraws a request that times out while queued: it is never sent', async () => {
    vi.useFakeTimers();
    const { send, transactions } = controlledSend();
    const batcher = new ProduceBatcher({ send, maxRecords: 100, maxBytes: 10_000, timeoutMs: 1_000, maxPendingBytes: 1e9 });
    const first = promiseState(batcher.submit([record('a')]));
    const queued = promiseState(batcher.submit([record('b')]));
    await vi.advanceTimersByTimeAsync(1_000);
    expect(first.value).toBeInstanceOf(ProduceTimeoutError);
    expect(queued.value).toBeInstanceOf(ProduceTimeoutError);
    expect((queued.value as ProduceTimeoutError).timeoutMs).toBe(1_000);
    expect(batcher.queued).toBe(0);

    transactions[0]!.commit();
    await vi.advanceTimersByTimeAsync(0);
    expect(transactions).toHaveLength(1);
    // The commit that arrives after the timeout changes nothing for the caller.
    expect(first.value).toBeInstanceOf(ProduceTimeoutError);
  });

  it('times out a request whose transaction hangs, and keeps the others’ deadlines apart', async () => {
    vi.useFakeTimers();
    const { send, transactions } = controlledSend();
    const batcher = new ProduceBatcher({ send, maxRecords: 100, maxBytes: 10_000, timeoutMs: 1_000, maxPendingBytes: 1e9 });
    const early = promiseState(batcher.submit([record('a')]));
    await vi.advanceTimersByTimeAsync(600);
    const late = promiseState(batcher.submit([record('b')]));
    await vi.advanceTimersByTimeAsync(400);
    expect(early.value).toBeInstanceOf(ProduceTimeoutError);
    expect(late.value).toBe('pending');
    transactions[0]!.commit();
    await vi.advanceTimersByTimeAsync(0);
    expect(labels(transactions[1]!.records)).toEqual(['b']);
    transactions[1]!.commit();
    await vi.advanceTimersByTimeAsync(0);
    expect(late.value).toBe('committed');
  });

  it('resolves an empty request at once without a transaction', async () => {
    const { send, transactions } = controlledSend();
    const batcher = new ProduceBatcher({ send, maxRecords: 100, maxBytes: 10_000, timeoutMs: 1_000, maxPendingBytes: 1e9 });
    await batcher.submit([]);
    expect(transactions).toHaveLength(0);
  });

  it('on close refuses new requests and waits for the accepted ones', async () => {
    const { send, transactions } = controlledSend();
    const batcher = new ProduceBatcher({ send, maxRecords: 100, maxBytes: 10_000, timeoutMs: 10_000, maxPendingBytes: 1e9 });
    const inFlight = promiseState(batcher.submit([record('a')]));
    const queued = promiseState(batcher.submit([record('b')]));
    const closed = promiseState(batcher.close());
    await expect(batcher.submit([record('c')])).rejects.toBeInstanceOf(BatcherClosedError);
    transactions[0]!.commit();
    await settle();
    expect(closed.value).toBe('pending');
    transactions[1]!.commit();
    await settle();
    expect([inFlight.value, queued.value, closed.value]).toEqual(['committed', 'committed', 'committed']);
  });

  it('closes at once when idle', async () => {
    const batcher = new ProduceBatcher({ send: async () => {}, maxRecords: 1, maxBytes: 1, timeoutMs: 1, maxPendingBytes: 1e9 });
    await batcher.close();
  });
});

describe('ProduceBatcher bytes in flight', () => {
  it('refuses a request at once while the bytes waiting for Kafka are at the bound, and takes requests again once they drain', async () => {
    let release: () => void = () => undefined;
    const send = () => new Promise<void>((resolve) => (release = resolve));
    const batcher = new ProduceBatcher({ send, maxRecords: 100, maxBytes: 1_000_000, timeoutMs: 10_000, maxPendingBytes: 250 });
    const record = { key: Buffer.from('k'), value: Buffer.alloc(99) };
    const first = batcher.submit([record]);
    const second = batcher.submit([record]);
    expect(batcher.isFull()).toBe(false);
    await expect(batcher.submit([record, record])).rejects.toBeInstanceOf(BatcherFullError);
    expect(batcher.pendingBytes).toBe(200);
    const tick = () => new Promise((resolve) => setImmediate(resolve));
    release();
    await first;
    await tick();
    release();
    await second;
    expect(batcher.pendingBytes).toBe(0);
    const third = batcher.submit([record, record]);
    await tick();
    release();
    await third;
  });

  it('refuses the party that filled the bound, not one holding little of it, up to a quarter past it', async () => {
    const batcher = new ProduceBatcher({ send: () => new Promise<void>(() => undefined), maxRecords: 100, maxBytes: 1_000_000, timeoutMs: 10_000, maxPendingBytes: 800 });
    const record = (bytes: number) => ({ key: Buffer.from('k'), value: Buffer.alloc(bytes - 1) });
    for (let index = 0; index < 8; index++) settledLater(batcher.submit([record(100)], 'flood'));
    expect(batcher.pendingBytes).toBe(800);
    expect(batcher.isFull('flood')).toBe(true);
    expect(batcher.isFull()).toBe(true);
    expect(batcher.isFull('quiet')).toBe(false);
    await expect(batcher.submit([record(50)], 'flood')).rejects.toBeInstanceOf(BatcherFullError);
    // An eighth of the bound is 100 bytes: the quiet party gets in while it holds less.
    settledLater(batcher.submit([record(60)], 'quiet'));
    settledLater(batcher.submit([record(30)], 'quiet'));
    expect(batcher.isFull('quiet')).toBe(false);
    settledLater(batcher.submit([record(30)], 'quiet'));
    expect(batcher.isFull('quiet')).toBe(true);
    await expect(batcher.submit([record(10)], 'quiet')).rejects.toBeInstanceOf(BatcherFullError);
    // Other light parties too, but never past a quarter more than the bound in all (1,000 bytes).
    settledLater(batcher.submit([record(80)], 'third'));
    expect(batcher.pendingBytes).toBe(1_000);
    await expect(batcher.submit([record(10)], 'fourth')).rejects.toBeInstanceOf(BatcherFullError);
    expect(batcher.isFull('fourth')).toBe(true);
  });
});
