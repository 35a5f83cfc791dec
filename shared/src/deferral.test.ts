import { describe, expect, it } from 'vitest';
import { testDelivery } from '@tributary/test/harness/deliveries';
import { deferral, deferredError, endedWithoutRequest, lastAttemptError, stepsElapsed, wasDeferred } from './deferral.js';
import { DEFAULT_LADDER, type RetryLadder } from './retry-ladder.js';

const DEFERRED_ERROR = 'deferred: circuit open';

const ladder: RetryLadder = { delaysMs: [10_000, 60_000, 300_000], windowMs: 4 * 3_600_000 };
const T0 = Date.UTC(2026, 0, 1);

const delivery = testDelivery('crm', 'm1', { userId: null, body: Buffer.from('{}'), receivedAt: T0 - 100, routedAt: T0 - 50 });

describe('deferral', () => {
  it('puts a waiting delivery on the first tier without counting an attempt, and starts its window', () => {
    expect(deferral(delivery, 'circuit_open', ladder, T0)).toEqual({
      kind: 'retry',
      record: { delivery: { ...delivery, firstAttemptAt: T0, lastError: DEFERRED_ERROR }, dueAt: T0 + 10_000, tier: '10s' },
    });
  });

  it('climbs the ladder with the time already spent waiting, or with the attempts made', () => {
    const waiting = { ...delivery, firstAttemptAt: T0, lastError: DEFERRED_ERROR };
    // Deferred again as it comes back from each tier: 10 s, then 1 m, then 5 m apart.
    expect(deferral(waiting, 'circuit_open', ladder, T0 + 10_000)).toMatchObject({ kind: 'retry', record: { tier: '1m', dueAt: T0 + 70_000 } });
    expect(deferral(waiting, 'circuit_open', ladder, T0 + 70_000)).toMatchObject({ kind: 'retry', record: { tier: '5m' } });
    // A delivery retried twice already is deferred no lower than its third step.
    const retried = { ...delivery, attempts: 2, firstAttemptAt: T0, lastError: 'HTTP 500', lastStatus: 500 };
    expect(deferral(retried, 'circuit_open', ladder, T0 + 1000)).toMatchObject({
      kind: 'retry',
      record: { tier: '5m', delivery: { attempts: 2, lastError: 'deferred: circuit open; last error: HTTP 500', lastStatus: 500 } },
    });
  });

  it('waits on the longest tier that is back by the time an open circuit lets probes through', () => {
    // Open for 5 more minutes: the 10 s step would only come back to be deferred again.
    expect(deferral(delivery, 'circuit_open', ladder, T0, T0 + 300_000)).toMatchObject({ kind: 'retry', record: { tier: '5m', dueAt: T0 + 300_000 } });
    expect(deferral(delivery, 'circuit_open', ladder, T0, T0 + 299_999)).toMatchObject({ kind: 'retry', record: { tier: '1m', dueAt: T0 + 60_000 } });
    // Open for less than the ladder's step: the step.
    expect(deferral(delivery, 'circuit_open', ladder, T0, T0 + 5_000)).toMatchObject({ kind: 'retry', record: { tier: '10s', dueAt: T0 + 10_000 } });
  });

  it('expires a delivery whose destination stays saturated past the window', () => {
    const waiting = { ...delivery, firstAttemptAt: T0, lastError: DEFERRED_ERROR };
    const outcome = deferral(waiting, 'circuit_open', ladder, T0 + ladder.windowMs - 1000);
    expect(outcome).toMatchObject({ kind: 'dead', letter: { reason: 'expired', delivery: { attempts: 0 } } });
    expect(outcome.kind === 'dead' && outcome.letter.error).toMatch(/circuit open/);
  });

  it('gives a delivery deferred near the window\'s end a last wait when its step no longer fits', () => {
    // The default ladder's step after 3 h 01 m of waiting is an hour; 59 minutes are left.
    const waiting = { ...delivery, firstAttemptAt: T0, lastError: DEFERRED_ERROR };
    const minutes = (m: number): number => T0 + m * 60_000;
    expect(deferral(waiting, 'circuit_open', DEFAULT_LADDER, minutes(181), minutes(181) + 5_000)).toMatchObject({ kind: 'retry', record: { tier: '30m', dueAt: minutes(211) } });
    expect(deferral(waiting, 'backlog_full', DEFAULT_LADDER, minutes(211))).toMatchObject({ kind: 'retry', record: { tier: '15m', dueAt: minutes(226) } });
    // 14 minutes left: a 5-minute wait would be the first of many ever shorter ones.
    expect(deferral(waiting, 'circuit_open', DEFAULT_LADDER, minutes(226))).toMatchObject({ kind: 'dead', letter: { reason: 'expired' } });
  });

  it('keeps the last real error behind any number of deferral notes', () => {
    const once = deferredError('circuit_open', 'webhooks[0] https://x: HTTP 503');
    expect(once).toBe('deferred: circuit open; last error: webhooks[0] https://x: HTTP 503');
    const twice = deferredError('backlog_full', once);
    expect(twice).toBe('deferred: destination backlog full; last error: webhooks[0] https://x: HTTP 503');
    expect(lastAttemptError(twice)).toBe('webhooks[0] https://x: HTTP 503');
    expect(lastAttemptError(deferredError('circuit_open', null))).toBeNull();
    expect(wasDeferred({ lastError: twice })).toBe(true);
    expect(wasDeferred({ lastError: 'HTTP 500' })).toBe(false);
  });
});

describe('stepsElapsed', () => {
  it('counts whole ladder steps, repeating the last delay', () => {
    const short = { delaysMs: [100, 200], windowMs: 10_000 };
    expect([0, 99, 100, 299, 300, 499, 500, 700].map((ms) => stepsElapsed(short, ms))).toEqual([0, 0, 1, 1, 2, 2, 3, 4]);
  });
});

describe('endedWithoutRequest', () => {
  it('records for the delivery log an end decided without a request: a deferral that expired, or a window passed', () => {
    const waiting = { ...delivery, attempts: 2, firstAttemptAt: T0, lastError: 'deferred: circuit open; last error: HTTP 503', lastStatus: 503 };
    const letter = { delivery: waiting, reason: 'expired', status: 503, error: 'no wait left', deadAt: T0 + 5 } as const;
    expect(endedWithoutRequest(letter, 'circuit_open', T0 + 5)).toMatchObject({
      deliveryId: 'crm/web/m1', kind: 'deferred', attempt: 2, outcome: 'dead', lane: 'retry', startedAt: T0 + 5, durationMs: 0,
      status: 503, error: 'no wait left', deferReason: 'circuit_open', deadReason: 'expired', nextAttemptAt: null, targets: [],
    });
    expect(endedWithoutRequest(letter, null, T0 + 5)).toMatchObject({ kind: 'preflight', deferReason: null, deadReason: 'expired' });
  });
});
