import { describe, expect, it } from 'vitest';
import type { DestinationHealth } from '@tributary/schemas';
import { circuitOpenUntil, OPEN_AHEAD_MS, parkReason, STALE_AFTER_MS } from './destination-health.js';

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
    congestedSince: null,
    attempts: 10,
    deferrals: 100,
    updatedAt: NOW - 1_000,
    ...fields,
  };
}

describe('parkReason', () => {
  const closed = { state: 'closed', openUntil: null } as const;

  it('is circuit_open when every fresh view has the circuit open or half-open (probing), its open period over or not', () => {
    expect(parkReason([view('a'), view('b', { openUntil: NOW - 1 })], NOW)).toBe('circuit_open');
    expect(parkReason([view('a'), view('b', { state: 'half_open', openUntil: null })], NOW)).toBe('circuit_open');
  });

  it('is congested when a closed circuit is congested and every other fresh view is tripped or congested', () => {
    expect(parkReason([view('a', { ...closed, inFlight: 64, congestedSince: NOW - 1_500 })], NOW)).toBe('congested');
    expect(parkReason([view('a'), view('b', { ...closed, inFlight: 3, congestedSince: NOW - 1_500 })], NOW)).toBe('congested');
  });

  it('is undefined when any fresh view has the circuit closed and its attempts moving', () => {
    expect(parkReason([view('a'), view('b', closed)], NOW)).toBeUndefined();
    expect(parkReason([view('a', { ...closed, congestedSince: NOW - 1_500 }), view('b', closed)], NOW)).toBeUndefined();
    const older = view('old', closed) as Partial<DestinationHealth>;
    delete older.congestedSince;
    expect(parkReason([older as DestinationHealth], NOW)).toBeUndefined();
  });

  it('ignores stale views, and is undefined with no fresh one', () => {
    const dead = view('dead', { ...closed, updatedAt: NOW - STALE_AFTER_MS - 1 });
    expect(parkReason([view('a'), dead], NOW)).toBe('circuit_open');
    expect(parkReason([view('gone', { updatedAt: NOW - STALE_AFTER_MS - 1 })], NOW)).toBeUndefined();
    expect(parkReason([], NOW)).toBeUndefined();
  });
});

describe('circuitOpenUntil', () => {
  it('is the earliest end of the open periods when every fresh view has the circuit open for a while yet', () => {
    expect(circuitOpenUntil([view('a'), view('b', { openUntil: NOW + 5_000 })], NOW)).toBe(NOW + 5_000);
    expect(circuitOpenUntil([view('a', { openUntil: NOW + OPEN_AHEAD_MS })], NOW)).toBe(NOW + OPEN_AHEAD_MS);
  });

  it('is undefined when a fresh view is closed, half-open (it takes probes) or about to let probes through', () => {
    expect(circuitOpenUntil([view('a'), view('b', { state: 'closed', openUntil: null })], NOW)).toBeUndefined();
    expect(circuitOpenUntil([view('a'), view('b', { state: 'half_open', openUntil: null })], NOW)).toBeUndefined();
    expect(circuitOpenUntil([view('a'), view('b', { openUntil: NOW + OPEN_AHEAD_MS - 1 })], NOW)).toBeUndefined();
    expect(circuitOpenUntil([view('a', { openUntil: NOW - 1 })], NOW)).toBeUndefined();
  });

  it('ignores stale views, and is undefined with no fresh one', () => {
    const dead = view('dead', { state: 'closed', openUntil: null, updatedAt: NOW - STALE_AFTER_MS - 1 });
    expect(circuitOpenUntil([view('a'), dead], NOW)).toBe(NOW + 20_000);
    expect(circuitOpenUntil([dead], NOW)).toBeUndefined();
    expect(circuitOpenUntil([], NOW)).toBeUndefined();
  });
});
