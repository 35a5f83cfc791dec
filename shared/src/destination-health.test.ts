import { describe, expect, it } from 'vitest';
import type { DestinationHealth } from '@tributary/schemas';
import { circuitTrippedEverywhere, STALE_AFTER_MS } from './destination-health.js';

const NOW = Date.parse('2026-11-26T00:00:00Z');

function view(instanceId: string, fields: Partial<DestinationHealth> = {}): DestinationHealth {
  return {
    destinationId: 'crm',
    instanceId,
    state: 'open',
    stateSince: NOW - 10_000,
    openUntil: NOW + 20_000,
    openings: 2,
    consecutiveFailures: 7,
    windowRequests: 10,
    windowFailures: 10,
    lastSuccessAt: null,
    lastFailureAt: NOW - 10_000,
    lastError: 'HTTP 503',
    queuedFirst: 0,
    queuedRetries: 0,
    inFlight: 0,
    attempts: 10,
    deferrals: 100,
    updatedAt: NOW - 1_000,
    ...fields,
  };
}

describe('circuitTrippedEverywhere', () => {
  it('is true when every fresh view has the circuit open or half-open (probing), its open period over or not', () => {
    expect(circuitTrippedEverywhere([view('a'), view('b', { openUntil: NOW - 1 })], NOW)).toBe(true);
    expect(circuitTrippedEverywhere([view('a'), view('b', { state: 'half_open', openUntil: null })], NOW)).toBe(true);
  });

  it('is false when any fresh view has the circuit closed', () => {
    expect(circuitTrippedEverywhere([view('a'), view('b', { state: 'closed', openUntil: null })], NOW)).toBe(false);
  });

  it('ignores stale views, and is false with no fresh one', () => {
    const dead = view('dead', { state: 'closed', openUntil: null, updatedAt: NOW - STALE_AFTER_MS - 1 });
    expect(circuitTrippedEverywhere([view('a'), dead], NOW)).toBe(true);
    expect(circuitTrippedEverywhere([view('gone', { updatedAt: NOW - STALE_AFTER_MS - 1 })], NOW)).toBe(false);
    expect(circuitTrippedEverywhere([], NOW)).toBe(false);
  });
});
