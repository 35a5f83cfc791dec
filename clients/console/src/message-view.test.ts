import { describe, expect, it } from 'vitest';
import type { Attempt, Delivery, MessageDetail } from './api';
import { isSettled, sinceReceived, timelines, truncationNote } from './message-view';

function attempt(destinationId: string, number: number, startedAt: string, fields: Partial<Attempt> = {}): Attempt {
  return {
    id: `0-${destinationId}-${number}`,
    deliveryId: `${destinationId}/m-1`,
    messageId: 'm-1',
    sourceId: 'web',
    destinationId,
    messageType: 'track',
    userId: 'u-1',
    anonymousId: null,
    kind: 'attempt',
    attempt: number,
    outcome: 'retry',
    lane: 'first',
    startedAt,
    durationMs: 12,
    status: 503,
    error: 'HTTP 503',
    deferReason: null,
    deadReason: null,
    nextAttemptAt: null,
    tier: null,
    receivedAt: '2026-11-25T10:00:00.000Z',
    replays: 0,
    targets: [],
    ...fields,
  };
}

function delivery(destinationId: string, state: Delivery['state']): Delivery {
  return {
    deliveryId: `${destinationId}/m-1`,
    sourceId: 'web',
    destinationId,
    state,
    attempts: 0,
    firstAttemptAt: null,
    lastAttemptAt: null,
    nextAttemptAt: null,
    lastStatus: null,
    lastError: null,
    deliveredAt: null,
    latencyMs: null,
  };
}

function detail(deliveries: Delivery[], attempts: Attempt[]): MessageDetail {
  return { messageId: 'm-1', messages: [], routing: [], deliveries, attempts };
}

describe('timelines', () => {
  it('groups attempts per delivery, oldest first, destinations in order', () => {
    const result = timelines(
      detail(
        [delivery('crm', 'delivered'), delivery('analytics', 'pending')],
        [attempt('crm', 2, '2026-11-25T10:00:01.000Z', { outcome: 'delivered', status: 200 }), attempt('crm', 1, '2026-11-25T10:00:00.100Z')],
      ),
    );
    expect(result.map((t) => [t.destinationId, t.delivery?.state, t.attempts.map((a) => a.attempt)])).toEqual([
      ['analytics', 'pending', []],
      ['crm', 'delivered', [1, 2]],
    ]);
  });

  it('keeps attempts of a delivery the answer does not list', () => {
    const result = timelines(detail([], [attempt('old', 1, '2026-11-25T10:00:00.100Z')]));
    expect(result).toMatchObject([{ destinationId: 'old', delivery: undefined, attempts: [{ attempt: 1 }] }]);
  });
});

describe('isSettled', () => {
  it('is settled once every delivery is delivered or dead', () => {
    expect(isSettled(detail([delivery('a', 'delivered'), delivery('b', 'dead')], []))).toBe(true);
    expect(isSettled(detail([delivery('a', 'delivered'), delivery('b', 'retrying')], []))).toBe(false);
    expect(isSettled(detail([delivery('a', 'pending')], []))).toBe(false);
    expect(isSettled(detail([delivery('a', 'deferred')], []))).toBe(false);
  });
});

describe('sinceReceived', () => {
  it('measures from receipt to the attempt', () => {
    expect(sinceReceived({ receivedAt: '2026-11-25T10:00:00.000Z', startedAt: '2026-11-25T10:00:10.234Z' })).toBe(10_234);
    expect(sinceReceived({ receivedAt: 'x', startedAt: '2026-11-25T10:00:10.234Z' })).toBeNull();
  });
});

describe('truncationNote', () => {
  it('says so when the log held more attempts than the answer, and nothing otherwise', () => {
    const attempts = [attempt('crm', 7, '2026-11-25T10:00:07.000Z'), attempt('crm', 8, '2026-11-25T10:00:08.000Z')];
    expect(truncationNote({ attempts, truncated: true })).toBe("Only the newest 2 attempts are shown: older ones were left out of the delivery log's answer.");
    expect(truncationNote({ attempts })).toBeUndefined();
  });
});
