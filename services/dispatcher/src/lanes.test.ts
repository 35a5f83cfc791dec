import { describe, expect, it } from 'vitest';
import { Lanes } from './lanes.js';

const sources = { first: { topic: 't.deliveries.v1', groupId: 'g' }, retry: { topic: 't.deliveries.retries.v1', groupId: 'g-retries' } };

describe('Lanes', () => {
  it('lets each lane read until its own records or bytes are taken, whatever the other holds', () => {
    const lanes = new Lanes({ maxBuffered: 2, maxBufferedBytes: 100, maxStagedBytes: 1_000 }, sources);
    lanes.read('retry', 10);
    lanes.read('retry', 10);
    expect(lanes.hasRoom('retry')).toBe(false);
    expect(lanes.hasRoom('first')).toBe(true);
    lanes.read('first', 100);
    expect(lanes.hasRoom('first')).toBe(false);
    lanes.release('retry', 10);
    expect(lanes.hasRoom('retry')).toBe(true);
    expect(lanes.buffered('retry')).toEqual({ records: 1, bytes: 10 });
  });

  it('stops both lanes while outcomes waiting for their transaction pass the staged bound', () => {
    const lanes = new Lanes({ maxBuffered: 10, maxBufferedBytes: 1_000, maxStagedBytes: 50 }, sources);
    const ledger = lanes.ledger('first', 0, 0n);
    ledger.read(0n);
    ledger.settle(0n, [{ topic: 'x', key: 'k', value: Buffer.alloc(60) }]);
    expect(lanes.stagedBytes()).toBe(61);
    expect(lanes.hasRoom('first')).toBe(false);
    expect(lanes.hasRoom('retry')).toBe(false);
  });

  it('keeps one ledger per owned partition, and drops those of revoked partitions', () => {
    const lanes = new Lanes({ maxBuffered: 10, maxBufferedBytes: 1_000, maxStagedBytes: 1_000 }, sources);
    const zero = lanes.ledger('first', 0, 5n);
    expect(lanes.ledger('first', 0, 9n)).toBe(zero);
    const one = lanes.ledger('first', 1, 0n);
    lanes.ledger('retry', 0, 0n);
    expect(lanes.keepOnly('first', [1])).toEqual([zero]);
    expect(lanes.isCurrent('first', zero)).toBe(false);
    expect(lanes.isCurrent('first', one)).toBe(true);
    expect([...lanes.owned()].map(({ ledger, groupId }) => `${groupId}:${ledger.topic}[${ledger.partition}]`)).toEqual(['g:t.deliveries.v1[1]', 'g-retries:t.deliveries.retries.v1[0]']);
  });
});
