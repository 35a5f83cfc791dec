import { describe, expect, it } from 'vitest';
import { formatHealth, type DestinationHealthAnswer } from './destinations.js';

const open: DestinationHealthAnswer = {
  destinationId: 'crm',
  state: 'open',
  backlog: { firstAttempts: 0, retries: 3, inFlight: 0 },
  instances: [
    { instanceId: 'd-0', state: 'open', openUntil: '2026-11-24T10:00:05.000Z', consecutiveFailures: 7, lastError: 'webhooks[0] https://crm.example: HTTP 503', deferrals: 120, stale: false },
    { instanceId: 'd-1', state: 'open', openUntil: null, consecutiveFailures: 1, lastError: 'old', deferrals: 5, stale: true },
  ],
  updatedAt: '2026-11-24T10:00:00.000Z',
};
const closed: DestinationHealthAnswer = { destinationId: 'analytics', state: 'closed', backlog: { firstAttempts: 2, retries: 0, inFlight: 1 }, instances: [], updatedAt: null };

describe('formatHealth', () => {
  it('prints one row per destination and says what stale reports were left out', () => {
    expect(formatHealth([open, closed])).toEqual([
      'DESTINATION  CIRCUIT  OPEN UNTIL                QUEUED  RETRIES  IN FLIGHT  DEFERRED  LAST ERROR',
      'crm          open     2026-11-24T10:00:05.000Z  0       3        0          120       webhooks[0] https://crm.example: HTTP 503',
      'analytics    closed   -                         2       0        1          0         -',
      '1 stale report from dispatchers that stopped without saying so (not counted; --json shows them)',
    ]);
  });

  it('marks a closed circuit whose destination is congested', () => {
    const hanging: DestinationHealthAnswer = {
      ...closed,
      destinationId: 'hangs',
      instances: [{ instanceId: 'd-0', state: 'closed', openUntil: null, consecutiveFailures: 0, lastError: null, congestedSince: '2026-11-24T10:00:00.000Z', deferrals: 0, stale: false }],
    };
    expect(formatHealth([hanging])[1]).toMatch(/^hangs +closed, congested +- /);
  });

  it('says so when there are none', () => {
    expect(formatHealth([])).toEqual(['no destinations']);
  });
});
