import { describe, expect, it } from 'vitest';
import { DEFAULT_BREAKER } from './breaker.js';
import { HealthBoard, congestedSince } from './health-board.js';

const failure = { kind: 'failure', error: 'HTTP 503' } as const;
const settings = { ...DEFAULT_BREAKER, consecutiveFailures: 2, openMs: 1_000 };
const LIMITS = { maxWaitMs: 1_000, maxInFlight: 4 };

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
    expect(board.congested({ first: 0, retry: 0, running: 4, progressAt: 10_000 }, 12_000)).toBe(true);
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
});
