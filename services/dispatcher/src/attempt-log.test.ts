import { describe, expect, it } from 'vitest';
import { testDelivery } from '@tributary/test/harness';
import { attemptRecord, type TargetReport } from './attempt-log.js';
import { classifyResult, originOf } from './classify.js';

const delivery = testDelivery('crm', 'm-1', { userId: 'u-1', anonymousId: 'a-1', receivedAt: 1_000 });
const target = (index: number, url: string, status: number, extra: Partial<TargetReport> = {}): TargetReport => ({
  index,
  url,
  verdict: classifyResult({ kind: 'response', status }),
  durationMs: 12.6,
  body: Buffer.from('{"ok":false}'),
  retryAfterMs: undefined,
  ...extra,
});

describe('attemptRecord', () => {
  it('records an attempt that scheduled a retry, URL by URL, without paths or queries', () => {
    const record = attemptRecord({
      delivery,
      lane: 'first',
      kind: 'attempt',
      attempt: 1,
      settlement: { kind: 'retry', record: { delivery: { ...delivery, attempts: 1, lastStatus: 503, lastError: 'HTTP 503' }, dueAt: 20_000, tier: '10s' } },
      startedAt: 10_000,
      durationMs: 15.4,
      targets: [target(0, 'https://hooks.example.com/secret-path?token=abc', 503, { retryAfterMs: 30_000 })],
    });
    expect(record).toEqual({
      deliveryId: delivery.deliveryId,
      messageId: 'm-1',
      sourceId: 'web',
      destinationId: 'crm',
      messageType: 'track',
      userId: 'u-1',
      anonymousId: 'a-1',
      kind: 'attempt',
      attempt: 1,
      outcome: 'retry',
      lane: 'first',
      startedAt: 10_000,
      durationMs: 15,
      status: 503,
      error: 'HTTP 503',
      deferReason: null,
      deadReason: null,
      nextAttemptAt: 20_000,
      tier: '10s',
      receivedAt: 1_000,
      replays: 0,
      targets: [
        { urlIndex: 0, origin: 'https://hooks.example.com', outcome: 'http_error', status: 503, errorClass: 'http_status', error: 'HTTP 503', durationMs: 13, responseBody: Buffer.from('{"ok":false}'), retryAfterMs: 30_000 },
      ],
    });
  });

  it('records a delivery, a dead letter and a deferral that expired', () => {
    const base = { delivery, lane: 'retry' as const, startedAt: 5, durationMs: 1, targets: [] };
    expect(attemptRecord({ ...base, kind: 'attempt', attempt: 2, settlement: { kind: 'delivered', status: 204 } })).toMatchObject({ outcome: 'delivered', status: 204, error: null, lane: 'retry' });
    const dead = { delivery, reason: 'gone', status: 410, error: 'HTTP 410 (Gone)', deadAt: 6 };
    expect(attemptRecord({ ...base, kind: 'attempt', attempt: 1, settlement: { kind: 'dead', letter: dead } })).toMatchObject({ outcome: 'dead', deadReason: 'gone', status: 410 });
    const expired = { ...dead, reason: 'expired', status: null, error: 'window passed' };
    expect(attemptRecord({ ...base, kind: 'deferred', attempt: 0, deferReason: 'circuit_open', settlement: { kind: 'dead', letter: expired } })).toMatchObject({
      kind: 'deferred',
      outcome: 'dead',
      deferReason: 'circuit_open',
      deadReason: 'expired',
    });
  });

  it('names an unparsable URL without echoing it', () => {
    expect(originOf('not a url with a token=abc')).toBe('(invalid URL)');
  });
});
