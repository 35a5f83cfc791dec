import { describe, expect, it } from 'vitest';
import { DEFAULT_BREAKER } from './breaker.js';
import { HealthBoard } from './health-board.js';

const failure = { kind: 'failure', error: 'HTTP 503' } as const;
const settings = { ...DEFAULT_BREAKER, consecutiveFailures: 2, openMs: 1_000 };

describe('HealthBoard', () => {
  it('reports circuit transitions and snapshots a destination with its backlog', () => {
    const board = new HealthBoard(settings, 'dispatcher-0');
    expect(board.admit('crm', 0)).toEqual({ admission: 'attempt', transition: undefined });
    expect(board.recordAttempt('crm', failure, false, 10)).toBeUndefined();
    expect(board.recordAttempt('crm', failure, false, 20)).toEqual({ destinationId: 'crm', from: 'closed', to: 'open' });
    expect(board.admit('crm', 500).admission).toBe('defer');
    board.noteDeferral('crm', 'circuit_open', 500);
    expect(board.admit('crm', 1_020)).toEqual({ admission: 'probe', transition: { destinationId: 'crm', from: 'open', to: 'half_open' } });
    expect(board.snapshot('crm', { first: 1, retry: 2, running: 1 }, 1_100)).toMatchObject({
      destinationId: 'crm',
      instanceId: 'dispatcher-0',
      state: 'half_open',
      consecutiveFailures: 2,
      queuedFirst: 1,
      queuedRetries: 2,
      inFlight: 1,
      attempts: 2,
      deferrals: 1,
      updatedAt: 1_100,
    });
    expect(board.takeDeferralCounts()).toEqual([{ destinationId: 'crm', circuit_open: 1, backlog_full: 0 }]);
    expect(board.takeDeferralCounts()).toEqual([]);
  });

  it('forgets destinations that are idle and closed, or no longer configured, but never busy ones', () => {
    const board = new HealthBoard(settings, 'i');
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
});
