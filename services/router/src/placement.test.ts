import { describe, expect, it } from 'vitest';
import type { ParkReason, RetryLadder } from '@tributary/shared';
import { testDelivery } from '@tributary/test/harness/deliveries';
import { placeDelivery, type DestinationHealthLookup } from './placement.js';

const NOW = Date.parse('2026-11-26T06:00:00Z');
const ladder: RetryLadder = { delaysMs: [10_000, 60_000, 300_000], windowMs: 4 * 3_600_000 };

const delivery = testDelivery('dead-hook', 'm1', { userId: 'u1', body: Buffer.from('{"event":"Signed Up"}'), receivedAt: NOW - 40, routedAt: NOW });

const health = (reason: ParkReason | undefined, openUntil?: number): DestinationHealthLookup => ({
  parkReason: () => reason,
  circuitOpenUntil: () => openUntil,
});

describe('placeDelivery', () => {
  it('sends a delivery the first way when no dispatcher has the destination tripped or congested everywhere', () => {
    expect(placeDelivery(delivery, health(undefined), ladder, NOW, false)).toEqual({ lane: 'first' });
  });

  it('defers a delivery of a circuit open everywhere straight onto the ladder, no sooner than the probes', () => {
    expect(placeDelivery(delivery, health('circuit_open', NOW + 5_000), ladder, NOW, false)).toEqual({
      lane: 'tier',
      record: { delivery: { ...delivery, firstAttemptAt: NOW, lastError: 'deferred: circuit open' }, dueAt: NOW + 10_000, tier: '10s' },
    });
    // Open for 5 more minutes: the longest tier back by then.
    expect(placeDelivery(delivery, health('circuit_open', NOW + 300_000), ladder, NOW, false)).toMatchObject({ lane: 'tier', record: { tier: '5m', dueAt: NOW + 300_000 } });
  });

  it('parks on the retry lane a circuit half-open or about to be (no open period ahead), and a congested destination', () => {
    expect(placeDelivery(delivery, health('circuit_open', undefined), ladder, NOW, false)).toEqual({ lane: 'retry', reason: 'circuit_open' });
    expect(placeDelivery(delivery, health('congested', NOW + 60_000), ladder, NOW, false)).toEqual({ lane: 'retry', reason: 'congested' });
  });

  it('puts what was read from the overflow lane on the retry lane, unless its destination is deferred or parked for its health', () => {
    expect(placeDelivery(delivery, health(undefined), ladder, NOW, true)).toEqual({ lane: 'retry', reason: 'overflow' });
    expect(placeDelivery(delivery, undefined, ladder, NOW, true)).toEqual({ lane: 'retry', reason: 'overflow' });
    expect(placeDelivery(delivery, undefined, ladder, NOW, false)).toEqual({ lane: 'first' });
    expect(placeDelivery(delivery, health('congested'), ladder, NOW, true)).toEqual({ lane: 'retry', reason: 'congested' });
    expect(placeDelivery(delivery, health('circuit_open', NOW + 60_000), ladder, NOW, true)).toMatchObject({ lane: 'tier', record: { tier: '1m' } });
  });

  it('leaves a delivery whose window is shorter than the first step to the dispatchers', () => {
    const tiny: RetryLadder = { delaysMs: [10_000], windowMs: 5_000 };
    expect(placeDelivery(delivery, health('circuit_open', NOW + 60_000), tiny, NOW, false)).toEqual({ lane: 'retry', reason: 'circuit_open' });
  });
});
