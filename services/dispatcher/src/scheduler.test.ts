import { describe, expect, it } from 'vitest';
import { DestinationScheduler, type SchedulerLimits } from './scheduler.js';

const limits: SchedulerLimits = { maxInFlight: 4, maxInFlightPerDestination: 2, maxQueuedPerDestination: 4, stalledAfterMs: 500 };

function fill(scheduler: DestinationScheduler<string>, destinationId: string, count: number): void {
  for (let index = 0; index < count; index++) scheduler.enqueue(destinationId, `${destinationId}${index}`);
}

describe('DestinationScheduler', () => {
  it('starts in FIFO order per destination within the per-destination and global limits', () => {
    const scheduler = new DestinationScheduler<string>(limits);
    fill(scheduler, 'a', 3);
    const started = scheduler.startRunnable(0);
    expect(started.map((s) => s.item)).toEqual(['a0', 'a1']);
    expect(scheduler.inFlight).toBe(2);
    expect(scheduler.queuedFor('a')).toBe(1);
    expect(scheduler.startRunnable(0)).toEqual([]);
    scheduler.finish(started[0]!, 10);
    expect(scheduler.startRunnable(10).map((s) => s.item)).toEqual(['a2']);
  });

  it('takes destinations in turn, so a deep queue does not starve a short one', () => {
    const scheduler = new DestinationScheduler<string>({ ...limits, maxInFlight: 3, maxInFlightPerDestination: 3 });
    fill(scheduler, 'deep', 3);
    fill(scheduler, 'short', 1);
    expect(scheduler.startRunnable(0).map((s) => s.item)).toEqual(['deep0', 'short0', 'deep1']);
  });

  it('never runs more than the global limit', () => {
    const scheduler = new DestinationScheduler<string>(limits);
    for (const id of ['a', 'b', 'c']) fill(scheduler, id, 2);
    expect(scheduler.startRunnable(0)).toHaveLength(4);
    expect(scheduler.inFlight).toBe(4);
    expect(scheduler.queued).toBe(2);
  });

  it('queues while the destination backlog has room', () => {
    const scheduler = new DestinationScheduler<string>(limits);
    fill(scheduler, 'a', 3);
    expect(scheduler.admission('a', 0)).toBe('queue');
    expect(scheduler.admission('unknown', 0)).toBe('queue');
  });

  it('keeps queueing past the bound for a destination that keeps finishing requests', () => {
    const scheduler = new DestinationScheduler<string>(limits);
    fill(scheduler, 'a', 6);
    const [first, second] = scheduler.startRunnable(0);
    expect(scheduler.queuedFor('a')).toBe(4);
    expect(scheduler.admission('a', 400)).toBe('queue');
    // Requests take 300-400 ms: busy, not stalled, as long as they keep finishing.
    scheduler.finish(first!, 300);
    scheduler.startRunnable(300);
    fill(scheduler, 'a', 1);
    scheduler.finish(second!, 400);
    expect(scheduler.admission('a', 800)).toBe('queue');
    expect(scheduler.trimExcess('a')).toEqual([]);
    // Nothing finished for more than the stall time while requests run: stalled.
    expect(scheduler.admission('a', 901)).toBe('defer');
  });

  it('defers a full backlog of a destination that has finished nothing for the stall time, trimming its queue to the bound', () => {
    const scheduler = new DestinationScheduler<string>(limits);
    fill(scheduler, 'a', 9);
    scheduler.startRunnable(0);
    expect(scheduler.queuedFor('a')).toBe(7);
    expect(scheduler.admission('a', 500)).toBe('queue');
    expect(scheduler.admission('a', 501)).toBe('defer');
    expect(scheduler.isStalled('a', 501)).toBe(true);
    expect(scheduler.trimExcess('a')).toEqual(['a6', 'a7', 'a8']);
    expect(scheduler.queuedFor('a')).toBe(4);
    expect(scheduler.queued).toBe(4);
  });

  it("does not count silence while this process's event loop was blocked", () => {
    const scheduler = new DestinationScheduler<string>(limits);
    fill(scheduler, 'a', 6);
    scheduler.startRunnable(0);
    scheduler.noteUnresponsiveUntil(700);
    expect(scheduler.admission('a', 800)).toBe('queue');
    expect(scheduler.admission('a', 1201)).toBe('defer');
  });

  it('defers at once once its finished requests were slow on average, until fast ones pull the average down', () => {
    const scheduler = new DestinationScheduler<string>(limits);
    fill(scheduler, 'a', 6);
    for (const slow of scheduler.startRunnable(0)) scheduler.finish(slow, 5000);
    const next = scheduler.startRunnable(5000);
    fill(scheduler, 'a', 2);
    expect(scheduler.queuedFor('a')).toBe(4);
    // The new wave has just started, but the average says the destination hangs.
    expect(scheduler.admission('a', 5001)).toBe('defer');
    let now = 5010;
    for (const started of next) scheduler.finish(started, now);
    let fastOnes = 0;
    while (scheduler.admission('a', now) === 'defer') {
      for (const fast of scheduler.startRunnable(now)) {
        scheduler.finish(fast, now + 10);
        fastOnes++;
      }
      fill(scheduler, 'a', 4 - scheduler.queuedFor('a'));
      now += 10;
    }
    expect(fastOnes).toBeGreaterThan(0);
    expect(fastOnes).toBeLessThan(30);
  });

  it('does not count a single hanging request against a destination that keeps answering', () => {
    const scheduler = new DestinationScheduler<string>({ ...limits, maxInFlightPerDestination: 3 });
    fill(scheduler, 'a', 7);
    const [hanging, ...others] = scheduler.startRunnable(0);
    for (const other of others) scheduler.finish(other, 20);
    scheduler.startRunnable(20);
    fill(scheduler, 'a', 4 - scheduler.queuedFor('a'));
    expect(hanging!.item).toBe('a0');
    expect(scheduler.admission('a', 400)).toBe('queue');
    expect(scheduler.isStalled('a', 400)).toBe(false);
  });

  it('removes queued items on request (a revoked partition) and keeps running ones counted', () => {
    const scheduler = new DestinationScheduler<string>(limits);
    fill(scheduler, 'a', 3);
    fill(scheduler, 'b', 1);
    const running = scheduler.startRunnable(0);
    expect(running.map((s) => s.item)).toEqual(['a0', 'b0', 'a1']);
    expect(scheduler.removeQueued((item) => item.startsWith('a'))).toEqual(['a2']);
    expect(scheduler.queued).toBe(0);
    expect(scheduler.inFlight).toBe(3);
    for (const started of running) scheduler.finish(started, 1);
    expect(scheduler.inFlight).toBe(0);
    expect(scheduler.startRunnable(1)).toEqual([]);
    fill(scheduler, 'a', 1);
    expect(scheduler.startRunnable(2).map((s) => s.item)).toEqual(['a0']);
  });

  it('ignores finishing the same attempt twice', () => {
    const scheduler = new DestinationScheduler<string>(limits);
    fill(scheduler, 'a', 1);
    const [started] = scheduler.startRunnable(0);
    scheduler.finish(started!, 1);
    scheduler.finish(started!, 2);
    expect(scheduler.inFlight).toBe(0);
  });
});
