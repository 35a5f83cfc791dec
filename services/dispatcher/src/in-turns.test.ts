import { setImmediate as nextImmediate } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { inTurns } from './in-turns.js';

describe('inTurns', () => {
  it('handles the first turn at once and the rest on later turns, in order', async () => {
    const handled: number[] = [];
    inTurns([...Array(150).keys()], 64, (item) => handled.push(item));
    expect(handled).toHaveLength(64);
    await nextImmediate();
    expect(handled).toHaveLength(128);
    await nextImmediate();
    expect(handled).toEqual([...Array(150).keys()]);
  });

  it('lets work queued meanwhile run between its turns', async () => {
    const order: string[] = [];
    inTurns(['a', 'b', 'c'], 1, (item) => order.push(item));
    // Queued behind the second turn, ahead of the third.
    setImmediate(() => order.push('other work'));
    await nextImmediate();
    await nextImmediate();
    await nextImmediate();
    expect(order).toEqual(['a', 'b', 'other work', 'c']);
  });

  it('does nothing for no items, and at least one item a turn', () => {
    const turns: Array<() => void> = [];
    const handled: number[] = [];
    inTurns([], 10, (item: number) => handled.push(item), (turn) => turns.push(turn));
    expect(turns).toHaveLength(0);
    inTurns([1, 2], 0, (item) => handled.push(item), (turn) => turns.push(turn));
    expect(handled).toEqual([1]);
    turns.shift()?.();
    expect(handled).toEqual([1, 2]);
    expect(turns).toHaveLength(0);
  });
});
