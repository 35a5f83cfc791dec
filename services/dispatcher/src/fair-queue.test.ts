import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { FairQueue, STALLED_HEADROOM, type FairQueueLimits, type Queued } from './fair-queue.js';

interface Item extends Queued {
  name: string;
  partition?: number;
}

const limits: FairQueueLimits = { maxInFlight: 4, maxInFlightPerDestination: 2 };

function fill(queue: FairQueue<Item>, destinationId: string, count: number, lane: Item['lane'] = 'first', bytes = 10): void {
  for (let index = 0; index < count; index++) queue.enqueue(destinationId, { name: `${destinationId}${lane === 'retry' ? 'r' : ''}${index}`, lane, bytes, queuedAt: index });
}

const names = (started: Array<{ item: Item }>) => started.map(({ item }) => item.name);

describe('FairQueue', () => {
  it('starts in FIFO order per destination within the per-destination and global limits', () => {
    const queue = new FairQueue<Item>(limits);
    fill(queue, 'a', 3);
    const started = queue.startRunnable(100);
    expect(names(started)).toEqual(['a0', 'a1']);
    expect(queue.inFlight).toBe(2);
    expect(queue.backlog('a')).toEqual({ first: 1, retry: 0, bytes: 10, running: 2, oldestQueuedAt: 2, progressAt: 100 });
    expect(queue.startRunnable(150)).toEqual([]);
    queue.finish('a', 700);
    expect(names(queue.startRunnable(800))).toEqual(['a2']);
    // Progress is the last finish while attempts run (a start after one finished does not move it).
    expect(queue.backlog('a').progressAt).toBe(700);
    queue.finish('a', 900);
    queue.finish('a', 950);
    expect(queue.backlog('a')).toMatchObject({ running: 0, progressAt: undefined });
  });

  it('takes destinations in turn, so a deep queue does not starve a short one', () => {
    const queue = new FairQueue<Item>({ maxInFlight: 3, maxInFlightPerDestination: 3 });
    fill(queue, 'deep', 3);
    fill(queue, 'short', 1);
    expect(names(queue.startRunnable())).toEqual(['deep0', 'short0', 'deep1']);
  });

  it('alternates the lanes of a destination, so a flood of due retries gets every other start', () => {
    const queue = new FairQueue<Item>({ maxInFlight: 6, maxInFlightPerDestination: 6 });
    fill(queue, 'a', 4, 'retry');
    fill(queue, 'a', 2, 'first');
    expect(names(queue.startRunnable())).toEqual(['a0', 'ar0', 'a1', 'ar1', 'ar2', 'ar3']);
    expect(queue.queuedIn('first')).toBe(0);
    expect(queue.queuedIn('retry')).toBe(0);
  });

  it('never runs more than the global limit', () => {
    const queue = new FairQueue<Item>(limits);
    for (const id of ['a', 'b', 'c']) fill(queue, id, 2);
    expect(queue.startRunnable()).toHaveLength(4);
    expect(queue.inFlight).toBe(4);
    expect(queue.queued).toBe(2);
    expect(queue.queuedBytes).toBe(20);
  });

  it('takes a destination’s whole queue at once (its circuit opened), leaving the others', () => {
    const queue = new FairQueue<Item>(limits);
    fill(queue, 'dead', 3);
    fill(queue, 'dead', 2, 'retry');
    fill(queue, 'ok', 1);
    expect(queue.takeQueued('dead').map((item) => item.name).sort()).toEqual(['dead0', 'dead1', 'dead2', 'deadr0', 'deadr1']);
    expect(queue.backlog('dead')).toEqual({ first: 0, retry: 0, bytes: 0, running: 0, oldestQueuedAt: undefined });
    expect(names(queue.startRunnable())).toEqual(['ok0']);
    expect(queue.queued).toBe(0);
  });

  it('takes only the queued items of one destination it is asked for, and keeps the rest in turn', () => {
    const queue = new FairQueue<Item>(limits);
    for (let index = 0; index < 4; index++) queue.enqueue('a', { name: `a${index}`, lane: index < 3 ? 'first' : 'retry', bytes: 10, partition: index % 2, queuedAt: 0 });
    expect(queue.takeQueued('a', (item) => item.partition === 1).map((item) => item.name)).toEqual(['a1', 'a3']);
    expect(queue.backlog('a')).toMatchObject({ first: 2, retry: 0, bytes: 20 });
    expect([queue.queued, queue.queuedBytes]).toEqual([2, 20]);
    expect(names(queue.startRunnable())).toEqual(['a0', 'a2']);
  });

  it('removes the queued items of a revoked partition and keeps the rest in order', () => {
    const queue = new FairQueue<Item>(limits);
    for (let index = 0; index < 4; index++) queue.enqueue('a', { name: `a${index}`, lane: 'first', bytes: 1, partition: index % 2, queuedAt: 0 });
    expect(queue.removeQueued((item) => item.partition === 1).map((item) => item.name)).toEqual(['a1', 'a3']);
    expect(names(queue.startRunnable())).toEqual(['a0', 'a2']);
  });

  it.each([
    { title: 'no stall limit', stalledAfterMs: undefined, bound: limits.maxInFlight },
    { title: 'stalled destinations set aside', stalledAfterMs: 5, bound: limits.maxInFlight * STALLED_HEADROOM },
  ])('keeps its counts exact and its limits, whatever is enqueued, started, finished or taken, as time passes ($title; property)', ({ stalledAfterMs, bound }) => {
    const op = fc.oneof(
      fc.record({ kind: fc.constant('enqueue' as const), destination: fc.integer({ min: 0, max: 3 }), lane: fc.constantFrom('first' as const, 'retry' as const), bytes: fc.integer({ min: 1, max: 100 }) }),
      fc.record({ kind: fc.constant('start' as const) }),
      fc.record({ kind: fc.constant('finish' as const), pick: fc.nat() }),
      fc.record({ kind: fc.constant('take' as const), destination: fc.integer({ min: 0, max: 3 }) }),
      fc.record({ kind: fc.constant('tick' as const), ms: fc.integer({ min: 1, max: 10 }) }),
    );
    fc.assert(
      fc.property(fc.array(op, { minLength: 30, maxLength: 200 }), (ops) => {
        const queue = new FairQueue<Item>({ ...limits, stalledAfterMs });
        const running: string[] = [];
        const queued = new Map<string, number>();
        let bytes = 0;
        let serial = 0;
        let now = 0;
        for (const step of ops) {
          if (step.kind === 'enqueue') {
            const id = `d${step.destination}`;
            queue.enqueue(id, { name: `${serial++}`, lane: step.lane, bytes: step.bytes, queuedAt: now });
            queued.set(id, (queued.get(id) ?? 0) + 1);
            bytes += step.bytes;
          } else if (step.kind === 'start') {
            for (const { destinationId, item } of queue.startRunnable(now)) {
              running.push(destinationId);
              queued.set(destinationId, queued.get(destinationId)! - 1);
              bytes -= item.bytes;
            }
            // Left waiting only when no slot is free.
            if (queue.waitingForRoom) expect(queue.inFlight).toBeGreaterThanOrEqual(limits.maxInFlight);
          } else if (step.kind === 'finish' && running.length > 0) {
            const [id] = running.splice(step.pick % running.length, 1);
            queue.finish(id!, now);
          } else if (step.kind === 'take') {
            const id = `d${step.destination}`;
            const taken = queue.takeQueued(id);
            queued.set(id, (queued.get(id) ?? 0) - taken.length);
            bytes -= taken.reduce((total, item) => total + item.bytes, 0);
          } else if (step.kind === 'tick') {
            now += step.ms;
          }
          expect(queue.inFlight).toBe(running.length);
          expect(queue.inFlight).toBeLessThanOrEqual(bound);
          expect(queue.queued).toBe([...queued.values()].reduce((a, b) => a + b, 0));
          expect(queue.queuedBytes).toBe(bytes);
          for (const [id, count] of queued) {
            const backlog = queue.backlog(id);
            expect(backlog.first + backlog.retry).toBe(count);
            expect(backlog.running).toBe(running.filter((r) => r === id).length);
            expect(backlog.running).toBeLessThanOrEqual(limits.maxInFlightPerDestination);
          }
        }
        // Whatever is queued eventually starts once everything running finishes.
        for (;;) {
          while (running.length > 0) queue.finish(running.pop()!, now);
          const started = queue.startRunnable(now);
          if (started.length === 0) break;
          running.push(...started.map((s) => s.destinationId));
        }
        expect(queue.queued).toBe(0);
      }),
    );
  });

  it('sets stalled destinations aside: their attempts stop holding the global limit, and they start no more while it is reached', () => {
    const queue = new FairQueue<Item>({ maxInFlight: 4, maxInFlightPerDestination: 2, stalledAfterMs: 1_000 });
    fill(queue, 'hangs-a', 3);
    fill(queue, 'hangs-b', 3);
    expect(names(queue.startRunnable(0))).toEqual(['hangs-a0', 'hangs-b0', 'hangs-a1', 'hangs-b1']);
    fill(queue, 'ok', 2);
    // Not stalled yet: every slot is theirs, and the caller is told to look again.
    expect(queue.startRunnable(500)).toEqual([]);
    expect(queue.waitingForRoom).toBe(true);
    // No answer for longer than a second: the healthy destination runs beside them; they do not grow.
    expect(names(queue.startRunnable(1_001))).toEqual(['ok0', 'ok1']);
    expect(queue.inFlight).toBe(6);
    expect(queue.backlog('hangs-a')).toMatchObject({ first: 1, running: 2 });
    // One of theirs finishing (its timeout) makes it a destination in progress again, within the room left.
    queue.finish('hangs-a', 5_000);
    expect(names(queue.startRunnable(5_000))).toEqual(['hangs-a2']);
    // What is left waits for its own destination's slots, not for room.
    expect(queue.waitingForRoom).toBe(false);
    queue.finish('hangs-b', 6_000);
    expect(names(queue.startRunnable(6_000))).toEqual(['hangs-b2']);
    expect(queue.queued).toBe(0);
  });

  it('never runs more than twice the global limit, however many destinations stall', () => {
    const queue = new FairQueue<Item>({ maxInFlight: 2, maxInFlightPerDestination: 2, stalledAfterMs: 1_000 });
    fill(queue, 'h', 2);
    expect(queue.startRunnable(0)).toHaveLength(2);
    fill(queue, 'x', 2);
    fill(queue, 'y', 2);
    expect(names(queue.startRunnable(2_000))).toEqual(['x0', 'y0']);
    expect(queue.inFlight).toBe(4);
    expect(queue.startRunnable(10_000)).toEqual([]);
    expect(queue.waitingForRoom).toBe(true);
  });
});
