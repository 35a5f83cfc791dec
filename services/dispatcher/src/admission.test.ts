import { describe, expect, it } from 'vitest';
import { admit, type BacklogLimits } from './admission.js';

const limits: BacklogLimits = { maxQueuedPerDestination: 4, maxQueuedBytesPerDestination: 1_000, maxInFlightPerDestination: 2, maxQueueWaitMs: 1_000 };
const idle = { queued: 0, queuedBytes: 0, running: 0, oldestQueuedAt: undefined };
const NOW = 10_000;
const saturated = { queued: 4, queuedBytes: 400, running: 2, oldestQueuedAt: NOW - 1_500 };

describe('admit', () => {
  it('defers without a request while the circuit is open', () => {
    expect(admit('defer', idle, 10, limits, NOW, true)).toEqual({ kind: 'defer', reason: 'circuit_open' });
  });

  it('queues a half-open probe even when the backlog is full', () => {
    expect(admit('probe', saturated, 10, limits, NOW, true)).toEqual({ kind: 'queue', probe: true });
  });

  it('defers when the destination holds its own deliveries back: queue full and every slot busy', () => {
    expect(admit('attempt', saturated, 10, limits, NOW, true)).toEqual({ kind: 'defer', reason: 'backlog_full' });
    expect(admit('attempt', { queued: 1, queuedBytes: 990, running: 2, oldestQueuedAt: NOW - 1_500 }, 20, limits, NOW, true)).toEqual({ kind: 'defer', reason: 'backlog_full' });
  });

  it('does not judge a burst its slots are draining: the oldest queued delivery has not waited long', () => {
    expect(admit('attempt', { ...saturated, oldestQueuedAt: NOW - 50 }, 10, limits, NOW, true)).toEqual({ kind: 'queue', probe: false });
  });

  it('queues when slots are free: the backlog is the dispatcher’s, and fetching waits instead', () => {
    expect(admit('attempt', { ...saturated, running: 1 }, 10, limits, NOW, true)).toEqual({ kind: 'queue', probe: false });
  });

  it('does not judge a destination while this process’s event loop was blocked', () => {
    expect(admit('attempt', saturated, 10, limits, NOW, false)).toEqual({ kind: 'queue', probe: false });
  });
});
