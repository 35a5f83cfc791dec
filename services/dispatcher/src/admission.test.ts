import { describe, expect, it } from 'vitest';
import { admit, type BacklogLimits } from './admission.js';

const limits: BacklogLimits = { maxDestinationShare: 0.5, maxQueueWaitMs: 1_000 };
const NOW = 10_000;
const hogging = { fill: 0.95, destinationShare: 0.8 };
const waiting = NOW - 1_500;

describe('admit', () => {
  it('defers without a request while the circuit is open', () => {
    expect(admit('defer', { fill: 0, destinationShare: 0 }, undefined, limits, NOW, false)).toEqual({ kind: 'defer', reason: 'circuit_open' });
  });

  it('queues a half-open probe even when its destination hogs the lane', () => {
    expect(admit('probe', hogging, waiting, limits, NOW, false)).toEqual({ kind: 'queue', probe: true });
  });

  it('defers a destination that holds most of a nearly full lane and is not keeping up', () => {
    expect(admit('attempt', hogging, waiting, limits, NOW, false)).toEqual({ kind: 'defer', reason: 'backlog_full' });
  });

  it('queues while the lane has room, or the destination holds a small share, or is draining its queue', () => {
    expect(admit('attempt', { fill: 0.5, destinationShare: 1 }, waiting, limits, NOW, false)).toEqual({ kind: 'queue', probe: false });
    expect(admit('attempt', { fill: 0.95, destinationShare: 0.3 }, waiting, limits, NOW, false)).toEqual({ kind: 'queue', probe: false });
    expect(admit('attempt', hogging, NOW - 50, limits, NOW, false)).toEqual({ kind: 'queue', probe: false });
  });

  it('does not judge a destination while the dispatcher itself is the bottleneck: fetching waits instead', () => {
    expect(admit('attempt', hogging, waiting, limits, NOW, true)).toEqual({ kind: 'queue', probe: false });
    // Its attempts finishing now and then: it may only be waiting for this process.
    expect(admit('attempt', hogging, waiting, limits, NOW, true, NOW - 200)).toEqual({ kind: 'queue', probe: false });
  });

  it('defers a hogging destination whose attempts have all hung past the queue wait, busy dispatcher or not', () => {
    expect(admit('attempt', hogging, waiting, limits, NOW, true, NOW - 1_200)).toEqual({ kind: 'defer', reason: 'backlog_full' });
    expect(admit('attempt', { fill: 0.5, destinationShare: 1 }, waiting, limits, NOW, true, NOW - 1_200)).toEqual({ kind: 'queue', probe: false });
  });
});
