import { describe, expect, it } from 'vitest';
import type { DestinationHealth } from '@tributary/schemas';
import { STALE_AFTER_MS, summarise } from './destination-health.js';

const NOW = Date.parse('2026-11-24T10:00:00Z');

function view(instanceId: string, fields: Partial<DestinationHealth> = {}): DestinationHealth {
  return {
    destinationId: 'crm',
    instanceId,
    state: 'closed',
    stateSince: NOW - 60_000,
    openUntil: null,
    openings: 0,
    consecutiveFailures: 0,
    windowRequests: 10,
    windowFailures: 0,
    lastSuccessAt: NOW - 1_000,
    lastFailureAt: null,
    lastError: null,
    queuedFirst: 1,
    queuedRetries: 2,
    inFlight: 3,
    congestedSince: null,
    attempts: 100,
    deferrals: 0,
    updatedAt: NOW - 2_000,
    ...fields,
  };
}

describe('summarise', () => {
  it('is closed with nothing queued when no dispatcher reports on the destination', () => {
    expect(summarise('crm', [], NOW)).toEqual({ destinationId: 'crm', state: 'closed', backlog: { firstAttempts: 0, retries: 0, inFlight: 0 }, instances: [], updatedAt: null });
  });

  it('takes the worst fresh state and sums the fresh backlogs', () => {
    const summary = summarise(
      'crm',
      [view('b', { state: 'open', openUntil: NOW + 5_000, openings: 2, lastError: 'HTTP 503', queuedFirst: 0, queuedRetries: 0, inFlight: 0 }), view('a', { state: 'half_open' })],
      NOW,
    );
    expect(summary.state).toBe('open');
    expect(summary.backlog).toEqual({ firstAttempts: 1, retries: 2, inFlight: 3 });
    expect(summary.instances.map((instance) => instance.instanceId)).toEqual(['a', 'b']);
    expect(summary.instances[1]).toMatchObject({ state: 'open', openUntil: '2026-11-24T10:00:05.000Z', openings: 2, lastError: 'HTTP 503', stale: false });
    expect(summary.updatedAt).toBe('2026-11-24T09:59:58.000Z');
  });

  it('lists a view not refreshed for a while as stale and does not count it', () => {
    const summary = summarise('crm', [view('gone', { state: 'open', updatedAt: NOW - STALE_AFTER_MS - 1 }), view('live')], NOW);
    expect(summary.state).toBe('closed');
    expect(summary.backlog).toEqual({ firstAttempts: 1, retries: 2, inFlight: 3 });
    expect(summary.instances.find((instance) => instance.instanceId === 'gone')).toMatchObject({ stale: true, state: 'open' });
  });
});
