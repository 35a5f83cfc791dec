import { describe, expect, it } from 'vitest';
import { DEFAULT_BREAKER } from './breaker.js';
import { HealthBoard, stalledSince } from './health-board.js';

const failure = { kind: 'failure', error: 'HTTP 503' } as const;
const settings = { ...DEFAULT_BREAKER, consecutiveFailures: 2, openMs: 1_000 };

describe('HealthBoard', () => {
  it('reports circuit transitions and snapshots a destination with its backlog', () => {
    const board = new HealthBoard(settings, 'dispatcher-0', 1_000);
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
      stalledSince: null,
      attempts: 2,
      deferrals: 1,
      updatedAt: 1_100,
    });
    expect(board.takeDeferralCounts()).toEqual([{ destinationId: 'crm', circuit_open: 1, backlog_full: 0 }]);
    expect(board.takeDeferralCounts()).toEqual([]);
  });

  it('forgets destinations that are idle and closed, or no longer configured, but never busy ones', () => {
    const board = new HealthBoard(settings, 'i', 1_000);
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

  it('calls a destination stalled while attempts are out and none has finished for longer than the stall time', () => {
    expect(stalledSince({ first: 0, retry: 0, running: 3, progressAt: 10_000 }, 11_000, 1_000)).toBeNull();
    expect(stalledSince({ first: 0, retry: 0, running: 3, progressAt: 10_000 }, 11_001, 1_000)).toBe(10_000);
    // Nothing out: nothing to wait for, however long ago the last attempt finished.
    expect(stalledSince({ first: 5, retry: 0, running: 0, progressAt: undefined }, 50_000, 1_000)).toBeNull();
    const board = new HealthBoard(settings, 'i', 1_000);
    board.admit('hangs', 10_000);
    expect(board.stalled({ first: 0, retry: 0, running: 64, progressAt: 10_000 }, 12_000)).toBe(true);
    expect(board.snapshot('hangs', { first: 0, retry: 0, running: 64, progressAt: 10_000 }, 12_000)?.stalledSince).toBe(10_000);
  });
});
