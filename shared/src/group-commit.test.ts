import { describe, expect, it } from 'vitest';
import { GroupCommit } from './group-commit.js';
import { promiseState } from '@tributary/test/harness/promise-state';

interface Chunk {
  label: string;
  records: number;
}

/** A commit function whose transactions the test finishes by hand. */
function controlledCommit() {
  const transactions: Array<{ chunks: Chunk[]; commit(): void; fail(error: Error): void }> = [];
  const commit = (chunks: Chunk[]) => new Promise<void>((resolve, reject) => transactions.push({ chunks, commit: resolve, fail: reject }));
  const labels = (index: number) => transactions[index]?.chunks.map(({ label }) => label);
  return { commit, transactions, labels };
}

function groupCommit(commit: (chunks: Chunk[]) => Promise<void>, maxRecords = 100): GroupCommit<Chunk> {
  return new GroupCommit<Chunk>({ maxRecords, records: (chunk) => chunk.records, commit });
}

/** Lets promise callbacks and the deferred start of a transaction run. */
async function nextTurn(): Promise<void> {
  for (let turn = 0; turn < 3; turn++) await new Promise((resolve) => setImmediate(resolve));
}


describe('GroupCommit', () => {
  it('with lingerMs, gathers what arrives within it into the first transaction', async () => {
    const { commit, transactions, labels } = controlledCommit();
    const group = new GroupCommit<Chunk>({ maxRecords: 100, records: (chunk) => chunk.records, commit, lingerMs: 40 });
    void group.submit({ label: 'early', records: 1 });
    await nextTurn();
    expect(transactions).toHaveLength(0);
    void group.submit({ label: 'later', records: 1 });
    await new Promise((resolve) => setTimeout(resolve, 60));
    expect(labels(0)).toEqual(['early', 'later']);
  });

  it('with lingerMs, starts a transaction at once when the queue fills one', async () => {
    const { commit, transactions, labels } = controlledCommit();
    const group = new GroupCommit<Chunk>({ maxRecords: 100, records: (chunk) => chunk.records, commit, lingerMs: 60_000 });
    void group.submit({ label: 'first', records: 60 });
    await nextTurn();
    expect(transactions).toHaveLength(0);
    void group.submit({ label: 'fills-it', records: 40 });
    await nextTurn();
    expect(labels(0)).toEqual(['first', 'fills-it']);
    transactions[0]!.commit();
    void group.submit({ label: 'alone', records: 100 });
    await nextTurn();
    expect(labels(1)).toEqual(['alone']);
  });

  // A linger far longer than a few turns of the event loop, so that a busy machine does not end it early.
  it('with lingerMs, does not make chunks that waited behind a transaction wait again', async () => {
    const { commit, transactions, labels } = controlledCommit();
    const group = new GroupCommit<Chunk>({ maxRecords: 100, records: (chunk) => chunk.records, commit, lingerMs: 200 });
    void group.submit({ label: 'a', records: 1 });
    await new Promise((resolve) => setTimeout(resolve, 250));
    expect(labels(0)).toEqual(['a']);
    void group.submit({ label: 'behind', records: 1 });
    await new Promise((resolve) => setTimeout(resolve, 250));
    transactions[0]!.commit();
    await nextTurn();
    expect(labels(1)).toEqual(['behind']);
    // A chunk arriving with nothing in flight lingers as before.
    transactions[1]!.commit();
    await nextTurn();
    void group.submit({ label: 'fresh', records: 1 });
    await nextTurn();
    expect(transactions).toHaveLength(2);
    await new Promise((resolve) => setTimeout(resolve, 250));
    expect(labels(2)).toEqual(['fresh']);
  });

  it('puts the chunks submitted in one turn of the event loop into one transaction', async () => {
    const { commit, transactions, labels } = controlledCommit();
    const group = groupCommit(commit);
    const submitted = ['p0', 'p1', 'p2'].map((label) => promiseState(group.submit({ label, records: 10 })));
    expect(transactions).toHaveLength(0);
    await nextTurn();
    expect(transactions).toHaveLength(1);
    expect(labels(0)).toEqual(['p0', 'p1', 'p2']);

    transactions[0]!.commit();
    await nextTurn();
    expect(submitted.map(({ value }) => value)).toEqual(['committed', 'committed', 'committed']);
    expect(transactions).toHaveLength(1);
  });

  it('takes the chunks of the highest priority first, in arrival order within one, and at least one of every priority', async () => {
    const { commit, transactions, labels } = controlledCommit();
    const group = new GroupCommit<Chunk>({ maxRecords: 20, records: (chunk) => chunk.records, commit, priority: (chunk) => (chunk.label.startsWith('main') ? 1 : 0) });
    void group.submit({ label: 'overflow-a', records: 10 });
    await nextTurn();
    for (const label of ['overflow-b', 'overflow-c', 'main-a', 'overflow-d', 'main-b']) void group.submit({ label, records: 10 });
    transactions[0]!.commit();
    await nextTurn();
    expect(labels(1)).toEqual(['main-a', 'main-b', 'overflow-b']);
    transactions[1]!.commit();
    await nextTurn();
    expect(labels(2)).toEqual(['overflow-c', 'overflow-d']);
  });

  it('does not starve a lower priority whose chunks are larger than the room the higher one leaves', async () => {
    const { commit, labels } = controlledCommit();
    const group = new GroupCommit<Chunk>({ maxRecords: 100, records: (chunk) => chunk.records, commit, priority: (chunk) => (chunk.label.startsWith('main') ? 1 : 0) });
    void group.submit({ label: 'overflow-1', records: 100 });
    void group.submit({ label: 'main-1', records: 5 });
    await nextTurn();
    expect(labels(0)).toEqual(['main-1', 'overflow-1']);
  });

  it('takes one yielding chunk of a lower priority into a transaction with higher-priority chunks, and fills up with them otherwise', async () => {
    const { commit, transactions, labels } = controlledCommit();
    const group = new GroupCommit<Chunk>({
      maxRecords: 100,
      records: (chunk) => chunk.records,
      commit,
      priority: (chunk) => (chunk.label.startsWith('main') ? 1 : 0),
      yields: (chunk) => chunk.label.startsWith('behind'),
    });
    for (const label of ['behind-1', 'behind-2', 'main-1', 'behind-3']) void group.submit({ label, records: 10 });
    await nextTurn();
    expect(labels(0)).toEqual(['main-1', 'behind-1']);
    transactions[0]!.commit();
    await nextTurn();
    expect(labels(1)).toEqual(['behind-2', 'behind-3']);
  });

  it('holds chunks submitted during a transaction for the next one', async () => {
    const { commit, transactions, labels } = controlledCommit();
    const group = groupCommit(commit);
    const first = promiseState(group.submit({ label: 'p0-a', records: 5 }));
    await nextTurn();
    const second = promiseState(group.submit({ label: 'p1-a', records: 5 }));
    const third = promiseState(group.submit({ label: 'p2-a', records: 5 }));
    await nextTurn();
    expect(transactions).toHaveLength(1);

    transactions[0]!.commit();
    await nextTurn();
    expect([first.value, second.value, third.value]).toEqual(['committed', 'pending', 'pending']);
    expect(labels(1)).toEqual(['p1-a', 'p2-a']);
    transactions[1]!.commit();
    await nextTurn();
    expect([second.value, third.value]).toEqual(['committed', 'committed']);
  });

  it('lets the callers of a committed transaction hand over their next chunks before the next one starts', async () => {
    const { commit, transactions, labels } = controlledCommit();
    const group = groupCommit(commit);
    const loop = async (partition: string) => {
      await group.submit({ label: `${partition}-1`, records: 5 });
      await group.submit({ label: `${partition}-2`, records: 5 });
    };
    const loops = [loop('p0'), loop('p1')];
    await nextTurn();
    transactions[0]!.commit();
    await nextTurn();
    expect(labels(1)).toEqual(['p0-2', 'p1-2']);
    transactions[1]!.commit();
    await Promise.all(loops);
  });

  it('caps a transaction at maxRecords ingest records, in arrival order, and gives a larger chunk its own', async () => {
    const { commit, transactions, labels } = controlledCommit();
    const group = groupCommit(commit, 100);
    const all = [
      group.submit({ label: 'a', records: 60 }),
      group.submit({ label: 'b', records: 40 }),
      group.submit({ label: 'c', records: 1 }),
      group.submit({ label: 'big', records: 250 }),
      group.submit({ label: 'd', records: 30 }),
    ];
    for (let index = 0; index < 4; index++) {
      await nextTurn();
      transactions[index]!.commit();
    }
    await Promise.all(all);
    expect(transactions.map((_, index) => labels(index))).toEqual([['a', 'b'], ['c'], ['big'], ['d']]);
  });

  it('caps a transaction at maxBytes too, and gives a chunk larger than that its own', async () => {
    const { commit, transactions, labels } = controlledCommit();
    const sizes: Record<string, number> = { a: 3_000, b: 2_000, c: 1, huge: 9_000, d: 10 };
    const group = new GroupCommit<Chunk>({ maxRecords: 100, records: (chunk) => chunk.records, maxBytes: 5_000, bytes: (chunk) => sizes[chunk.label]!, commit });
    const all = ['a', 'b', 'c', 'huge', 'd'].map((label) => group.submit({ label, records: 1 }));
    for (let index = 0; index < 4; index++) {
      await nextTurn();
      transactions[index]!.commit();
    }
    await Promise.all(all);
    expect(transactions.map((_, index) => labels(index))).toEqual([['a', 'b'], ['c'], ['huge'], ['d']]);
  });

  it('fails every chunk of a failed transaction with its error, and only those', async () => {
    const { commit, transactions } = controlledCommit();
    const group = groupCommit(commit);
    const failed = [promiseState(group.submit({ label: 'p0', records: 1 })), promiseState(group.submit({ label: 'p1', records: 1 }))];
    await nextTurn();
    const later = promiseState(group.submit({ label: 'p2', records: 1 }));
    const error = new Error('fenced');
    transactions[0]!.fail(error);
    await nextTurn();
    expect(failed.map(({ value }) => value)).toEqual([error, error]);
    expect(later.value).toBe('pending');

    transactions[1]!.commit();
    await nextTurn();
    expect(later.value).toBe('committed');
  });

  it('never has two transactions in flight', async () => {
    let inFlight = 0;
    let most = 0;
    const group = groupCommit(async () => {
      most = Math.max(most, ++inFlight);
      await nextTurn();
      inFlight--;
    }, 3);
    await Promise.all(Array.from({ length: 20 }, (_, index) => group.submit({ label: String(index), records: 1 + (index % 3) })));
    expect(most).toBe(1);
  });
});
