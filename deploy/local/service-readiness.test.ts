import { describe, expect, it } from 'vitest';
import { waitForServices } from './service-readiness.js';

/** A clock that only moves when the poller sleeps, so each test runs instantly. */
function fakeClock(): { now: () => number; sleep: (ms: number) => Promise<void> } {
  let t = 0;
  return { now: () => t, sleep: async (ms) => void (t += ms) };
}

describe('waitForServices', () => {
  it('waits for the restarted child when the first one crashed, instead of giving up on the service', async () => {
    const clock = fakeClock();
    // The first child crashes at 2 s and is replaced at 5 s; the replacement is ready from 10 s.
    const first = { done: false };
    const second = { done: false };
    const result = await waitForServices({
      names: ['router'] as const,
      current: () => {
        if (clock.now() >= 2_000) first.done = true;
        return clock.now() < 5_000 ? first : second;
      },
      isReady: async () => clock.now() >= 10_000,
      stopping: () => false,
      timeoutMs: 90_000,
      intervalMs: 500,
      ...clock,
    });
    expect(result).toEqual([]);
    expect(clock.now()).toBe(10_000);
  });

  it('does not count an answer on the port while the service has no running child', async () => {
    const clock = fakeClock();
    const result = await waitForServices({
      names: ['ingest', 'indexer'] as const,
      current: (name) => ({ done: name === 'ingest' }),
      isReady: async () => true,
      stopping: () => false,
      timeoutMs: 3_000,
      intervalMs: 500,
      ...clock,
    });
    expect(result).toEqual(['ingest']);
  });

  it('reports what was not ready by the deadline, in the given order', async () => {
    const clock = fakeClock();
    const result = await waitForServices({
      names: ['ingest', 'router', 'dispatcher'] as const,
      current: () => ({ done: false }),
      isReady: async (name) => name === 'router',
      stopping: () => false,
      timeoutMs: 2_000,
      intervalMs: 500,
      ...clock,
    });
    expect(result).toEqual(['ingest', 'dispatcher']);
  });

  it('stops waiting when the run shuts down', async () => {
    const clock = fakeClock();
    const result = await waitForServices({
      names: ['ingest'] as const,
      current: () => ({ done: false }),
      isReady: async () => false,
      stopping: () => clock.now() >= 1_000,
      timeoutMs: 90_000,
      intervalMs: 500,
      ...clock,
    });
    expect(result).toEqual(['ingest']);
    expect(clock.now()).toBe(1_000);
  });
});
