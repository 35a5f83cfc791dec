import { describe, expect, it } from 'vitest';
import { createLogger } from './logger.js';
import { ProducerSlot } from './producer-slot.js';

const logger = createLogger({ service: 'producer-slot-test', level: 'silent' });

/** A connector whose outcomes the test decides, counting how many connections run at once. */
function connector() {
  let made = 0;
  let running = 0;
  const state = { attempts: 0, maxConcurrent: 0, failNext: 0, pending: [] as Array<() => void>, hold: false };
  const created: FakeProducer[] = [];

  class FakeProducer {
    disconnected = false;
    /** Which successful connection this is (0 until connected). */
    id = 0;
    async connect(): Promise<void> {
      running++;
      state.attempts++;
      state.maxConcurrent = Math.max(state.maxConcurrent, running);
      try {
        if (state.hold) await new Promise<void>((resolve) => state.pending.push(resolve));
        else await Promise.resolve();
        if (state.failNext > 0) {
          state.failNext--;
          throw new Error('broker away');
        }
        this.id = ++made;
      } finally {
        running--;
      }
    }
    disconnect(): Promise<void> {
      this.disconnected = true;
      return Promise.resolve();
    }
  }

  const create = (): FakeProducer => {
    const producer = new FakeProducer();
    created.push(producer);
    return producer;
  };
  const release = () => state.pending.splice(0).forEach((resolve) => resolve());
  return { create, created, state, release, made: () => made };
}

type FakeProducer = ReturnType<ReturnType<typeof connector>['create']>;

function slotWith(create: () => FakeProducer) {
  const usable: boolean[] = [];
  const slot = new ProducerSlot<FakeProducer>({ name: 'test producer', logger, create, onUsable: (value) => usable.push(value) });
  return { slot, usable };
}

const until = async (check: () => boolean, timeoutMs = 5_000): Promise<void> => {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
};

describe('ProducerSlot', () => {
  it('connects at start, waiting out failures, and hands out that one producer', async () => {
    const { create, created, state } = connector();
    state.failNext = 1;
    const { slot, usable } = slotWith(create);
    await slot.start();
    const first = await slot.current();
    expect(await slot.current()).toBe(first);
    expect(first.id).toBe(1);
    expect(usable).toEqual([true]);
    // The producer whose connection failed was let go, not left half-open.
    expect(created.map((producer) => producer.disconnected)).toEqual([true, false]);
  });

  it('connects once for callers that ask together', async () => {
    const { create, state, release, made } = connector();
    state.hold = true;
    const { slot } = slotWith(create);
    const asked = [slot.current(), slot.current(), slot.current()];
    release();
    const producers = await Promise.all(asked);
    expect(new Set(producers).size).toBe(1);
    expect(made()).toBe(1);
    expect(state.maxConcurrent).toBe(1);
  });

  it('replaces a failed producer: disconnects it and connects another before returning', async () => {
    const { create } = connector();
    const { slot, usable } = slotWith(create);
    await slot.start();
    const broken = await slot.current();
    await slot.replace(broken);
    const next = await slot.current();
    expect(broken.disconnected).toBe(true);
    expect(next).not.toBe(broken);
    expect(usable).toEqual([true, false, true]);
  });

  it('ignores a replacement asked for a producer already replaced', async () => {
    const { create, made } = connector();
    const { slot } = slotWith(create);
    await slot.start();
    const broken = await slot.current();
    await slot.replace(broken);
    const current = await slot.current();
    await slot.replace(broken);
    expect(await slot.current()).toBe(current);
    expect(current.disconnected).toBe(false);
    expect(made()).toBe(2);
  });

  it('while a replacement keeps failing, callers fail at once and one reconnection runs in the background until it succeeds', async () => {
    const { create, state } = connector();
    const { slot, usable } = slotWith(create);
    await slot.start();
    state.failNext = 2; // the replacement's own try, then the background's first
    await slot.replace(await slot.current());
    await expect(slot.current()).rejects.toThrow('the test producer is reconnecting');
    expect(usable).toEqual([true, false]);
    await until(() => usable.length === 3);
    expect(usable).toEqual([true, false, true]);
    expect((await slot.current()).id).toBe(2);
    expect(state.maxConcurrent).toBe(1);
  });

  it('after stop, hands out nothing and disconnects a connection that finishes late', async () => {
    const { create, state, release } = connector();
    const { slot, usable } = slotWith(create);
    await slot.start();
    const producer = await slot.current();
    await slot.stop();
    expect(producer.disconnected).toBe(true);
    await expect(slot.current()).rejects.toThrow('the test producer is stopped');

    const other = slotWith(create);
    state.hold = true;
    const late = other.slot.current();
    await other.slot.stop();
    release();
    await expect(late).rejects.toThrow('the test producer is stopped');
    expect(other.usable).toEqual([false]);
    expect(usable).toEqual([true, false]);
  });

  it('stops a background reconnection', async () => {
    const { create, state } = connector();
    const { slot } = slotWith(create);
    await slot.start();
    state.failNext = Number.MAX_SAFE_INTEGER;
    await slot.replace(await slot.current());
    await until(() => state.attempts >= 3); // start, the replacement's try, the background's first
    await slot.stop();
    const tries = state.attempts;
    await new Promise((resolve) => setTimeout(resolve, 1_200)); // past the background's next backoff (500 ms, then 1 s)
    expect(state.attempts).toBe(tries);
  });
});
