import { describe, expect, it } from 'vitest';
import { formatSummaries } from './summary.js';
import { testSummary } from './test-answers.js';

const range = { since: '2026-11-25T09:00:00.000Z', until: '2026-11-25T10:00:00.000Z' };

describe('formatSummaries', () => {
  it('prints a row per destination with its success rate, latency, retries, dead letters and circuit', () => {
    const quiet = testSummary({
      destinationId: 'analytics',
      attempts: 0,
      delivered: 0,
      failed: 0,
      deadLetters: 0,
      successRate: null,
      latency: { deliveryP50Ms: null, deliveryP95Ms: null, attemptP50Ms: null, attemptP95Ms: null },
      retriesPending: 0,
      circuit: null,
    });
    expect(formatSummaries([testSummary({ latency: { deliveryP50Ms: 40, deliveryP95Ms: 10_208, attemptP50Ms: 12, attemptP95Ms: 80 }, circuit: { state: 'open', backlog: { firstAttempts: 0, retries: 12, inFlight: 0 }, updatedAt: null } }), quiet], range)).toEqual([
      'DESTINATION  ATTEMPTS  SUCCESS  LATENCY P50  LATENCY P95  RETRIES PENDING  DEAD LETTERS  CIRCUIT',
      'crm          120       83.3%    40ms         10.2s        5                2             open',
      'analytics    0         -        -            -            0                0             unknown',
      'from 2026-11-25T09:00:00.000Z to 2026-11-25T10:00:00.000Z: SUCCESS = delivered ÷ attempts that sent requests; LATENCY = receipt to delivery; RETRIES PENDING = waiting on the retry ladder now',
      'CIRCUIT unknown: no dispatcher has reported on the destination (none is delivering to it now)',
    ]);
  });

  it('leaves the circuit note out when every circuit is known, and says when there are no destinations', () => {
    expect(formatSummaries([testSummary()], range)).toHaveLength(3);
    expect(formatSummaries([], range)).toEqual(['no destinations']);
  });
});
