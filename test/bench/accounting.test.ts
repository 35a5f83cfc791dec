import { describe, expect, it } from 'vitest';
import { reconcile } from './accounting.js';
import { BitSet } from './bitset.js';

describe('BitSet', () => {
  it('adds, reports repeats, grows, and survives base64', () => {
    const set = new BitSet(new Uint8Array(1));
    expect(set.add(3)).toBe(true);
    expect(set.add(3)).toBe(false);
    expect(set.add(100_000)).toBe(true);
    expect(set.size).toBe(2);
    const copy = BitSet.fromBase64(set.toBase64());
    expect([...copy.values()]).toEqual([3, 100_000]);
    expect(copy.size).toBe(2);
    expect(copy.has(4)).toBe(false);
    expect(copy.has(10_000_000)).toBe(false);
  });
});

describe('reconcile', () => {
  it('finds the accepted messages that never arrived, and counts arrivals of unacknowledged batches apart', () => {
    const accepted = new BitSet();
    accepted.add(0);
    accepted.add(2);
    const delivered = new BitSet();
    for (let seq = 0; seq < 10; seq++) delivered.add(seq); // batch 0, all of it
    for (let seq = 20; seq < 30; seq++) if (seq !== 23 && seq !== 27) delivered.add(seq); // batch 2, two missing
    delivered.add(15); // batch 1 was answered 503 but committed anyway
    const result = reconcile(accepted, delivered, 10);
    expect(result).toEqual({ acceptedMessages: 20, deliveredOfAccepted: 18, lost: 2, lostSample: [23, 27], deliveredUnacknowledged: 1 });
  });

  it('reports nothing lost when everything arrived', () => {
    const accepted = new BitSet();
    const delivered = new BitSet();
    for (let batch = 0; batch < 50; batch++) accepted.add(batch);
    for (let seq = 0; seq < 5000; seq++) delivered.add(seq);
    expect(reconcile(accepted, delivered, 100)).toMatchObject({ acceptedMessages: 5000, lost: 0, lostSample: [], deliveredUnacknowledged: 0 });
  });
});
