import { describe, expect, it } from 'vitest';
import { PartitionProgress } from './offsets.js';

describe('PartitionProgress', () => {
  it('commits nothing new before anything settles', () => {
    const progress = new PartitionProgress(0, 10n);
    progress.read(10n);
    progress.read(11n);
    expect(progress.commitPoint()).toBe(10n);
    expect(progress.uncommitted()).toBeUndefined();
  });

  it('holds the commit point at the lowest unsettled offset while later ones settle first', () => {
    const progress = new PartitionProgress(0, 0n);
    for (const offset of [0n, 1n, 2n, 3n]) progress.read(offset);
    progress.settle(2n);
    progress.settle(3n);
    expect(progress.commitPoint()).toBe(0n);
    progress.settle(0n);
    expect(progress.commitPoint()).toBe(1n);
    expect(progress.uncommitted()).toBe(1n);
    progress.settle(1n);
    expect(progress.commitPoint()).toBe(4n);
    expect(progress.unsettled).toBe(0);
  });

  it('moves past gaps and transaction markers once everything read is settled', () => {
    const progress = new PartitionProgress(1, 5n);
    progress.read(5n);
    progress.read(7n);
    progress.readUpTo(8n);
    progress.settle(7n);
    progress.settle(5n);
    expect(progress.commitPoint()).toBe(9n);
  });

  it('reports a commit point only when it moved past the last commit', () => {
    const progress = new PartitionProgress(0, 0n);
    progress.read(0n);
    progress.settle(0n);
    expect(progress.uncommitted()).toBe(1n);
    progress.markCommitted(1n);
    expect(progress.uncommitted()).toBeUndefined();
    progress.read(1n);
    expect(progress.uncommitted()).toBeUndefined();
  });

  it('recognises records re-fetched after a rebalance and refuses to read one twice', () => {
    const progress = new PartitionProgress(0, 100n);
    progress.read(100n);
    progress.read(101n);
    expect(progress.hasRead(99n)).toBe(true);
    expect(progress.hasRead(101n)).toBe(true);
    expect(progress.hasRead(102n)).toBe(false);
    expect(() => progress.read(101n)).toThrow(/already read/);
  });

  it('stays correct over many out-of-order settlements', () => {
    const progress = new PartitionProgress(0, 0n);
    const count = 5000;
    for (let offset = 0; offset < count; offset++) progress.read(BigInt(offset));
    // Settle odd offsets first, then even ones from the top down.
    for (let offset = 1; offset < count; offset += 2) progress.settle(BigInt(offset));
    expect(progress.commitPoint()).toBe(0n);
    for (let offset = count - 2; offset >= 2; offset -= 2) progress.settle(BigInt(offset));
    expect(progress.commitPoint()).toBe(0n);
    progress.settle(0n);
    expect(progress.commitPoint()).toBe(BigInt(count));
    expect(progress.unsettled).toBe(0);
  });
});
