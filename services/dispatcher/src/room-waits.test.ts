import { describe, expect, it } from 'vitest';
import type { DeliveryLane } from '@tributary/schemas';
import { RoomWaits } from './room-waits.js';

/** Turns run by hand, and the room each lane has. */
function setup(room: Record<DeliveryLane, boolean> = { first: false, retry: false }) {
  const turns: Array<() => void> = [];
  const asked: DeliveryLane[] = [];
  const waits = new RoomWaits(
    (lane) => {
      asked.push(lane);
      return room[lane];
    },
    (turn) => turns.push(turn),
  );
  const runTurns = () => {
    while (turns.length > 0) turns.shift()?.();
  };
  return { waits, room, turns, asked, runTurns };
}

/** Whether `promise` has settled once the microtasks queued now have run. */
async function settled(promise: Promise<void>): Promise<boolean> {
  let done = false;
  void promise.then(() => (done = true));
  await Promise.resolve();
  await Promise.resolve();
  return done;
}

describe('RoomWaits', () => {
  it('wakes a lane’s readers only once their lane has room', async () => {
    const { waits, room, runTurns } = setup();
    const first = waits.wait('first', 60_000);
    const retry = waits.wait('retry', 60_000);
    waits.changed();
    runTurns();
    expect(await settled(first)).toBe(false);
    expect(await settled(retry)).toBe(false);
    room.retry = true;
    waits.changed();
    runTurns();
    expect(await settled(retry)).toBe(true);
    expect(await settled(first)).toBe(false);
    expect(waits.count('first')).toBe(1);
    expect(waits.count('retry')).toBe(0);
  });

  it('gathers the changes of one turn into one wake, judging each lane once', async () => {
    const { waits, room, turns, asked, runTurns } = setup({ first: true, retry: false });
    const readers = [waits.wait('first', 60_000), waits.wait('first', 60_000), waits.wait('retry', 60_000)];
    for (let settle = 0; settle < 1_000; settle++) waits.changed();
    expect(turns).toHaveLength(1);
    // Nobody is woken before the turn ends.
    expect(await settled(readers[0] as Promise<void>)).toBe(false);
    runTurns();
    expect(asked.sort()).toEqual(['first', 'retry']);
    expect(await settled(readers[0] as Promise<void>)).toBe(true);
    expect(await settled(readers[1] as Promise<void>)).toBe(true);
    expect(await settled(readers[2] as Promise<void>)).toBe(false);
    room.retry = true;
    waits.changed();
    runTurns();
    expect(await settled(readers[2] as Promise<void>)).toBe(true);
  });

  it('does not ask about a lane nobody waits for', () => {
    const { waits, asked, runTurns } = setup();
    void waits.wait('any', 60_000);
    waits.changed();
    runTurns();
    expect(asked).toEqual([]);
  });

  it('wakes those waiting for any change at every wake, room or not', async () => {
    const { waits, runTurns } = setup();
    const drain = waits.wait('any', 60_000);
    waits.changed();
    runTurns();
    expect(await settled(drain)).toBe(true);
  });

  it('wakes everyone at once when ownership changes', async () => {
    const { waits, turns } = setup();
    const first = waits.wait('first', 60_000);
    const retry = waits.wait('retry', 60_000);
    waits.wakeAll();
    expect(turns).toHaveLength(0);
    expect(await settled(first)).toBe(true);
    expect(await settled(retry)).toBe(true);
  });

  it('wakes a waiter at its timeout with the lane still full, and forgets it', async () => {
    const { waits } = setup();
    const started = performance.now();
    await waits.wait('first', 20);
    expect(performance.now() - started).toBeGreaterThanOrEqual(15);
    expect(waits.count('first')).toBe(0);
  });

  it('a waiter woken is not woken again by a later wake', async () => {
    const { waits, runTurns } = setup({ first: true, retry: false });
    let wakes = 0;
    void waits.wait('first', 60_000).then(() => wakes++);
    waits.changed();
    runTurns();
    waits.changed();
    runTurns();
    await Promise.resolve();
    expect(wakes).toBe(1);
    expect(waits.count('first')).toBe(0);
  });
});
