import { describe, expect, it } from 'vitest';
import { admit, type BacklogLimits, type DestinationBacklog } from './admission.js';

const limits: BacklogLimits = { maxDestinationShare: 0.5, maxQueueWaitMs: 1_000, maxInFlightPerDestination: 4 };
const NOW = 10_000;
const hogging = { fill: 0.95, destinationShare: 0.8 };
const smallShare = { fill: 0.95, destinationShare: 0.1 };
/** Its oldest queued delivery has waited 1.5 s; two attempts out, the last finished just now. */
const waiting: DestinationBacklog = { oldestQueuedAt: NOW - 1_500, progressAt: NOW - 50, running: 2 };
const stalled: DestinationBacklog = { ...waiting, progressAt: NOW - 1_200 };
const saturated: DestinationBacklog = { ...waiting, running: 4 };

describe('admit', () => {
  it('defers without a request while the circuit is open', () => {
    expect(admit('defer', { fill: 0, destinationShare: 0 }, { oldestQueuedAt: undefined, progressAt: undefined, running: 0 }, limits, NOW, false)).toEqual({ kind: 'defer', reason: 'circuit_open' });
  });

  it('queues a half-open probe even when its destination hogs the lane', () => {
    expect(admit('probe', hogging, stalled, limits, NOW, false)).toEqual({ kind: 'queue', probe: true });
  });

  it('defers a destination that holds most of a nearly full lane and is not keeping up', () => {
    expect(admit('attempt', hogging, waiting, limits, NOW, false)).toEqual({ kind: 'defer', reason: 'backlog_full' });
  });

  it('queues while the lane has room, or the destination holds a small share and waits on nothing of its own, or is draining its queue', () => {
    expect(admit('attempt', { fill: 0.5, destinationShare: 1 }, stalled, limits, NOW, false)).toEqual({ kind: 'queue', probe: false });
    expect(admit('attempt', smallShare, waiting, limits, NOW, false)).toEqual({ kind: 'queue', probe: false });
    expect(admit('attempt', hogging, { ...saturated, oldestQueuedAt: NOW - 50 }, limits, NOW, false)).toEqual({ kind: 'queue', probe: false });
  });

  it('defers a destination with a small share of a nearly full lane whose queue waits on its own receiver: stalled, or every slot taken', () => {
    // Eight hanging destinations with an eighth of the lane each stopped it, none of them a hog.
    expect(admit('attempt', smallShare, stalled, limits, NOW, false)).toEqual({ kind: 'defer', reason: 'backlog_full' });
    expect(admit('attempt', smallShare, saturated, limits, NOW, false)).toEqual({ kind: 'defer', reason: 'backlog_full' });
    // Stalled, its queue cannot move however fresh: nothing queued yet, or just queued.
    expect(admit('attempt', smallShare, { ...stalled, oldestQueuedAt: undefined }, limits, NOW, false)).toEqual({ kind: 'defer', reason: 'backlog_full' });
    expect(admit('attempt', smallShare, { ...stalled, oldestQueuedAt: NOW - 10 }, limits, NOW, false)).toEqual({ kind: 'defer', reason: 'backlog_full' });
  });

  it('does not judge a destination while the dispatcher itself is the bottleneck: fetching waits instead', () => {
    expect(admit('attempt', hogging, waiting, limits, NOW, true)).toEqual({ kind: 'queue', probe: false });
    // Every slot taken, its attempts finishing now and then: it may only be waiting for this process.
    expect(admit('attempt', smallShare, saturated, limits, NOW, true)).toEqual({ kind: 'queue', probe: false });
  });

  it('defers a destination whose attempts have all hung past the queue wait, busy dispatcher or not, when the lane is nearly full', () => {
    expect(admit('attempt', hogging, stalled, limits, NOW, true)).toEqual({ kind: 'defer', reason: 'backlog_full' });
    expect(admit('attempt', smallShare, stalled, limits, NOW, true)).toEqual({ kind: 'defer', reason: 'backlog_full' });
    expect(admit('attempt', { fill: 0.5, destinationShare: 1 }, stalled, limits, NOW, true)).toEqual({ kind: 'queue', probe: false });
  });
});
