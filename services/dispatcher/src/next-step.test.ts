import { describe, expect, it } from 'vitest';
import type { Destination } from '@tributary/schemas';
import type { RetryLadder } from '@tributary/shared';
import { testDelivery } from '@tributary/test/harness/deliveries';
import { afterAttempt, preflight } from './next-step.js';

const ladder: RetryLadder = { delaysMs: [10_000, 60_000, 300_000], windowMs: 4 * 3_600_000 };
const T0 = Date.UTC(2026, 0, 1);

const delivery = testDelivery('crm', 'm1', { userId: null, body: Buffer.from('{}'), receivedAt: T0 - 100, routedAt: T0 - 50 });

const destination: Destination = {
  id: 'crm',
  name: 'CRM',
  type: 'webhooks',
  sources: ['web'],
  enabled: true,
  settings: { sharedSecret: null, standardWebhooksSecret: null, webhooks: [{ url: 'https://hooks.example.com/', headers: {} }] },
};

describe('preflight', () => {
  it('sends to an enabled destination inside the window', () => {
    expect(preflight(delivery, destination, ladder, T0)).toEqual({ kind: 'send', destination });
  });

  it('dead-letters a deleted or disabled destination without sending', () => {
    expect(preflight(delivery, undefined, ladder, T0)).toMatchObject({ kind: 'dead', letter: { reason: 'destination_deleted', deadAt: T0, delivery } });
    expect(preflight(delivery, { ...destination, enabled: false }, ladder, T0)).toMatchObject({
      kind: 'dead',
      letter: { reason: 'destination_disabled', status: null },
    });
  });

  it('dead-letters as expired an attempt that would happen past the window', () => {
    const late = { ...delivery, attempts: 4, firstAttemptAt: T0, lastError: 'HTTP 503', lastStatus: 503 };
    expect(preflight(late, destination, ladder, T0 + ladder.windowMs)).toMatchObject({ kind: 'send' });
    const result = preflight(late, destination, ladder, T0 + ladder.windowMs + 1);
    expect(result).toMatchObject({ kind: 'dead', letter: { reason: 'expired', status: 503, delivery: late } });
    expect(result.kind === 'dead' && result.letter.error).toContain('HTTP 503');
  });

  it('never expires a first attempt or a replay (no first-attempt time yet)', () => {
    expect(preflight({ ...delivery, replays: 1 }, destination, ladder, T0 + 100 * ladder.windowMs)).toMatchObject({ kind: 'send' });
  });
});

describe('afterAttempt', () => {
  it('delivered: nothing to write', () => {
    expect(afterAttempt(delivery, { kind: 'delivered', status: 204 }, ladder, T0, T0 + 30)).toEqual({ kind: 'delivered', status: 204 });
  });

  it('a retryable first attempt starts the window and goes to the first tier', () => {
    const result = afterAttempt(delivery, { kind: 'retry', status: 500, error: 'webhooks[0] https://x: HTTP 500' }, ladder, T0, T0 + 40);
    expect(result).toEqual({
      kind: 'retry',
      record: {
        delivery: { ...delivery, attempts: 1, firstAttemptAt: T0, lastError: 'webhooks[0] https://x: HTTP 500', lastStatus: 500 },
        dueAt: T0 + 40 + 10_000,
        tier: '10s',
      },
    });
  });

  it('a later retry keeps the first-attempt time and climbs the ladder', () => {
    const second = { ...delivery, attempts: 1, firstAttemptAt: T0 };
    const result = afterAttempt(second, { kind: 'retry', status: null, error: 'timeout' }, ladder, T0 + 10_000, T0 + 15_000);
    expect(result).toMatchObject({ kind: 'retry', record: { delivery: { attempts: 2, firstAttemptAt: T0, lastStatus: null }, tier: '1m', dueAt: T0 + 75_000 } });
  });

  it('a retry that would fall past the window is a dead letter (expired)', () => {
    const old = { ...delivery, attempts: 5, firstAttemptAt: T0 };
    const now = T0 + ladder.windowMs - 1000;
    const result = afterAttempt(old, { kind: 'retry', status: 502, error: 'HTTP 502' }, ladder, now - 10, now);
    expect(result).toMatchObject({ kind: 'dead', letter: { reason: 'expired', status: 502, deadAt: now, delivery: { attempts: 6, firstAttemptAt: T0 } } });
  });

  it('a fatal outcome is a dead letter with reason, status and error', () => {
    const result = afterAttempt(delivery, { kind: 'dead', reason: 'http_status', status: 404, error: 'webhooks[0] https://x: HTTP 404' }, ladder, T0, T0 + 5);
    expect(result).toEqual({
      kind: 'dead',
      letter: {
        delivery: { ...delivery, attempts: 1, firstAttemptAt: T0, lastError: 'webhooks[0] https://x: HTTP 404', lastStatus: 404 },
        reason: 'http_status',
        status: 404,
        error: 'webhooks[0] https://x: HTTP 404',
        deadAt: T0 + 5,
      },
    });
  });
});

describe('afterAttempt with Retry-After', () => {
  it('waits on the smallest tier at least as long as the receiver asked, whatever the ladder step', () => {
    const fifth = { ...delivery, attempts: 4, firstAttemptAt: T0 };
    const result = afterAttempt(fifth, { kind: 'retry', status: 429, error: 'HTTP 429', retryAfterMs: 2_000 }, ladder, T0 + 100_000, T0 + 100_000);
    expect(result).toMatchObject({ kind: 'retry', record: { tier: '10s', dueAt: T0 + 110_000, delivery: { attempts: 5, lastStatus: 429 } } });
    const later = afterAttempt(delivery, { kind: 'retry', status: 503, error: 'HTTP 503', retryAfterMs: 90_000 }, ladder, T0, T0);
    expect(later).toMatchObject({ kind: 'retry', record: { tier: '5m' } });
  });

  it('dead-letters as expired when the wait asked for ends past the window', () => {
    const old = { ...delivery, attempts: 3, firstAttemptAt: T0 };
    const now = T0 + ladder.windowMs - 30_000;
    expect(afterAttempt(old, { kind: 'retry', status: 503, error: 'HTTP 503', retryAfterMs: 60_000 }, ladder, now, now)).toMatchObject({
      kind: 'dead',
      letter: { reason: 'expired' },
    });
  });
});
