import { describe, expect, it } from 'vitest';
import { DEFAULT_BREAKER } from './breaker.js';
import { HealthBoard, NOT_CONGESTED, congestedSince, holdCongestion } from './health-board.js';

const failure = { kind: 'failure', error: 'HTTP 503' } as const;
const settings = { ...DEFAULT_BREAKER, consecutiveFailures: 2, openMs: 1_000 };
const LIMITS = { maxWaitMs: 1_000, maxInFlight: 4, holdMs: 5_000 };

describe('HealthBoard', () => {
  it('reports circuit transitions and snapshots a destination with its backlog', () => {
    const board = new HealthBoard(settings, 'dispatcher-0', LIMITS);
    expect(board.admit('crm', 0)).toEqual({ admission: 'attempt', transition: undefined });
    expect(board.recordAttempt('crm', failure, false, 10)).toBeUndefined();
    expect(board.recordAttempt('crm', failure, false, 20)).toEqual({ destinationId: 'crm', from: 'closed', to: 'open' });
    expect(board.admit('crm', 500).admission).toBe('defer');
    board.noteDeferral('crm', 'circuit_open', 500);
    expect(board.admit('crm', 1_020)).toEqual({ admission: 'probe', transition: { destinationId: 'crm', from: 'open', to: 'half_open' } });
    expect(board.snapshot('crm', { first: 1, retry: 2, running: 1, progressAt: 1_020 }, 1_100)).toMatchObject({
      destinationId: 'crm',
      instanceId: 'dispatcher-0',
      state: 'half_open',
      consecutiveFailures: 2,
      queuedFirst: 1,
      queuedRetries: 2,
      inFlight: 1,
      congestedSince: null,
      attempts: 2,
      deferrals: 1,
      updatedAt: 1_100,
    });
    expect(board.takeDeferralCounts()).toEqual([{ destinationId: 'crm', circuit_open: 1, backlog_full: 0 }]);
    expect(board.takeDeferralCounts()).toEqual([]);
  });

  it('forgets destinations that are idle and closed, or no longer configured, but never busy ones', () => {
    const board = new HealthBoard(settings, 'i', LIMITS);
    board.admit('idle', 0);
    board.recordAttempt('idle', { kind: 'success' }, false, 0);
    board.admit('failing', 0);
    board.recordAttempt('failing', failure, false, 0);
    board.admit('busy', 0);
    board.admit('deleted', 50_000);
    const forgotten = board.sweep(60_000, 30_000, (id) => id === 'busy', (id) => id !== 'deleted');
    expect(forgotten.sort()).toEqual(['deleted', 'idle']);
    expect([...board.destinations()].sort()).toEqual(['busy', 'failing']);
  });

  it('calls a destination congested while attempts are out and none has finished for longer than the wait (stalled)', () => {
    expect(congestedSince({ first: 0, retry: 0, running: 3, progressAt: 10_000 }, 11_000, LIMITS)).toBeNull();
    expect(congestedSince({ first: 0, retry: 0, running: 3, progressAt: 10_000 }, 11_001, LIMITS)).toBe(10_000);
    // Nothing out: nothing to wait for, however long ago the last attempt finished.
    expect(congestedSince({ first: 5, retry: 0, running: 0, oldestQueuedAt: 10_000, progressAt: undefined }, 50_000, LIMITS)).toBeNull();
    const board = new HealthBoard(settings, 'i', LIMITS);
    board.admit('hangs', 10_000);
    expect(board.congested('hangs', { first: 0, retry: 0, running: 4, progressAt: 10_000 }, 12_000)).toBe(true);
    expect(board.snapshot('hangs', { first: 0, retry: 0, running: 4, progressAt: 10_000 }, 12_000)?.congestedSince).toBe(10_000);
  });

  it('calls a destination congested while every request slot is taken and a delivery has waited longer than the wait (saturated)', () => {
    // Attempts finish (progress 100 ms ago) but not fast enough: all 4 slots busy, the queue waiting 1.5 s.
    expect(congestedSince({ first: 900, retry: 0, running: 4, oldestQueuedAt: 10_000, progressAt: 11_400 }, 11_500, LIMITS)).toBe(10_000);
    // A free slot: what waits is held back by this process, not by the receiver.
    expect(congestedSince({ first: 900, retry: 0, running: 3, oldestQueuedAt: 10_000, progressAt: 11_400 }, 11_500, LIMITS)).toBeNull();
    // Slots full, but nothing has waited long.
    expect(congestedSince({ first: 10, retry: 0, running: 4, oldestQueuedAt: 11_000, progressAt: 11_400 }, 11_500, LIMITS)).toBeNull();
  });

  it('publishes congestion at once and a catch-up only after the destination kept up for the hold', () => {
    const congested = holdCongestion(NOT_CONGESTED, 10_000, 11_001, 5_000);
    expect(congested).toEqual({ since: 10_000, keptUpSince: null });
    // Caught up between two slow answers: still congested, since the first time.
    const keepingUp = holdCongestion(congested, null, 12_000, 5_000);
    expect(keepingUp).toEqual({ since: 10_000, keptUpSince: 12_000 });
    expect(holdCongestion(keepingUp, null, 16_999, 5_000).since).toBe(10_000);
    // Stalled again within the hold: the catch-up starts over, the original since stays.
    const again = holdCongestion(keepingUp, 14_500, 15_600, 5_000);
    expect(again).toEqual({ since: 10_000, keptUpSince: null });
    expect(holdCongestion(holdCongestion(again, null, 16_000, 5_000), null, 20_999, 5_000).since).toBe(10_000);
    expect(holdCongestion(holdCongestion(again, null, 16_000, 5_000), null, 21_000, 5_000)).toEqual(NOT_CONGESTED);
    // Never congested: nothing to hold.
    expect(holdCongestion(NOT_CONGESTED, null, 30_000, 5_000)).toBe(NOT_CONGESTED);
  });

  it('holds a slow receiver at low traffic congested across its deliveries, in the published view too', () => {
    const board = new HealthBoard(settings, 'i', LIMITS);
    board.admit('slow', 0);
    // One delivery at a time, each answered after 2 s, one every 3 s: stalled during each.
    for (let start = 0; start < 30_000; start += 3_000) {
      if (start > 0) expect(board.congested('slow', { first: 0, retry: 0, running: 0 }, start)).toBe(true);
      expect(board.congested('slow', { first: 0, retry: 0, running: 1, progressAt: start }, start + 1_500)).toBe(true);
      expect(board.snapshot('slow', { first: 0, retry: 0, running: 1, progressAt: start }, start + 1_500)?.congestedSince).toBe(0);
    }
    // Then it answers at once: caught up once it has kept up for the hold.
    expect(board.congested('slow', { first: 0, retry: 0, running: 0 }, 31_000)).toBe(true);
    expect(board.congested('slow', { first: 0, retry: 0, running: 0 }, 35_999)).toBe(true);
    expect(board.congested('slow', { first: 0, retry: 0, running: 0 }, 36_000)).toBe(false);
    expect(board.snapshot('slow', { first: 0, retry: 0, running: 0 }, 36_100)?.congestedSince).toBeNull();
    expect(board.congested('unknown', { first: 0, retry: 0, running: 9, progressAt: 0 }, 36_000)).toBe(false);
  });
});
