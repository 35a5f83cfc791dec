import { describe, expect, it } from 'vitest';
import { attemptJson, deliveriesOf, deliveryJson, summaryJson, timelineJson, type AttemptDbRow, type MessageDbRow } from './json.js';

const T = Date.parse('2026-11-25T10:00:00.000Z');

describe('row to JSON', () => {
  it('shows an attempt as the contract says: id partition-offset, ISO times', () => {
    const row: AttemptDbRow = {
      kafka_partition: 3,
      kafka_offset: 1042,
      delivery_id: 'crm/m-1',
      message_id: 'm-1',
      source_id: 'web',
      destination_id: 'crm',
      message_type: 'track',
      user_id: 'u-1',
      anonymous_id: null,
      kind: 'attempt',
      attempt: 1,
      outcome: 'retry',
      lane: 'first',
      started_at: T,
      duration_ms: 12,
      status: 503,
      error: 'HTTP 503',
      defer_reason: null,
      dead_reason: null,
      next_attempt_at: T + 10_000,
      tier: '10s',
      received_at: T - 5,
      replays: 0,
      targets: [],
    };
    expect(attemptJson(row)).toEqual({
      id: '3-1042',
      deliveryId: 'crm/m-1',
      messageId: 'm-1',
      sourceId: 'web',
      destinationId: 'crm',
      messageType: 'track',
      userId: 'u-1',
      anonymousId: null,
      kind: 'attempt',
      attempt: 1,
      outcome: 'retry',
      lane: 'first',
      startedAt: '2026-11-25T10:00:00.000Z',
      durationMs: 12,
      status: 503,
      error: 'HTTP 503',
      deferReason: null,
      deadReason: null,
      nextAttemptAt: '2026-11-25T10:00:10.000Z',
      tier: '10s',
      receivedAt: '2026-11-25T09:59:59.995Z',
      replays: 0,
      targets: [],
    });
  });

  it('shows a pending delivery with nulls', () => {
    expect(
      deliveryJson({ source_id: 'web', delivery_id: 'crm/m', message_id: 'm', destination_id: 'crm', state: 'pending', attempts: 0, first_attempt_at: null, last_attempt_at: null, next_attempt_at: null, last_status: null, last_error: null, delivered_at: null, latency_ms: null }),
    ).toEqual({ deliveryId: 'crm/m', sourceId: 'web', destinationId: 'crm', state: 'pending', attempts: 0, firstAttemptAt: null, lastAttemptAt: null, nextAttemptAt: null, lastStatus: null, lastError: null, deliveredAt: null, latencyMs: null });
  });

  it('summarises with a success rate over requests sent (null when none), whole-ms percentiles and no circuit', () => {
    const range = { since: T, until: T + 1000 };
    expect(summaryJson('crm', range, { destination_id: 'crm', attempts: 120, delivered: 100, failed: 20, deferred: 300, dead_letters: 2, delivery_p50: 40.4, delivery_p95: 899.6, attempt_p50: 12, attempt_p95: 80 }, 5)).toEqual({
      destinationId: 'crm',
      since: '2026-11-25T10:00:00.000Z',
      until: '2026-11-25T10:00:01.000Z',
      attempts: 120,
      delivered: 100,
      failed: 20,
      deferred: 300,
      deadLetters: 2,
      successRate: 0.833,
      latency: { deliveryP50Ms: 40, deliveryP95Ms: 900, attemptP50Ms: 12, attemptP95Ms: 80 },
      retriesPending: 5,
      circuit: null,
    });
    expect(summaryJson('idle', range, undefined, 0)).toMatchObject({ attempts: 0, successRate: null, latency: { deliveryP50Ms: null } });
  });

  it('draws every bucket, the empty ones as zeros', () => {
    const timeline = timelineJson('crm', { origin: T, bucketMs: 60_000, buckets: 3 }, [{ bucket: 1, attempts: 10, delivered: 9, failed: 1, deferred: 0, delivery_p50: 35, delivery_p95: 80.2 }]);
    expect(timeline).toEqual({
      destinationId: 'crm',
      bucketMs: 60_000,
      buckets: [
        { at: '2026-11-25T10:00:00.000Z', attempts: 0, delivered: 0, failed: 0, deferred: 0, deliveryP50Ms: null, deliveryP95Ms: null },
        { at: '2026-11-25T10:01:00.000Z', attempts: 10, delivered: 9, failed: 1, deferred: 0, deliveryP50Ms: 35, deliveryP95Ms: 80 },
        { at: '2026-11-25T10:02:00.000Z', attempts: 0, delivered: 0, failed: 0, deferred: 0, deliveryP50Ms: null, deliveryP95Ms: null },
      ],
    });
  });
});

describe('deliveriesOf', () => {
  const message = (routing: MessageDbRow['routing']): MessageDbRow => ({ seq: 1, source_id: 'web', message_id: 'm-1', type: 'track', user_id: 'u', anonymous_id: null, event: 'E', received_at: T, event_timestamp: T, message: {}, routing });
  const attempt = (offset: number, outcome: string, status: number): AttemptDbRow => ({
    kafka_partition: 2, kafka_offset: offset, delivery_id: 'crm/web/m-1', message_id: 'm-1', source_id: 'web', destination_id: 'crm', message_type: 'track', user_id: 'u', anonymous_id: null,
    kind: 'attempt', attempt: offset - 9, outcome, lane: offset === 10 ? 'first' : 'retry', started_at: T + offset * 1000, duration_ms: 5, status, error: null,
    defer_reason: null, dead_reason: null, next_attempt_at: null, tier: null, received_at: T, replays: 0, targets: [],
  });

  it("folds each delivery's state from its attempts and derives pending ones from the routing", () => {
    const routing = [
      { sourceId: 'web', destinationId: 'crm', decision: 'routed' as const, reason: null },
      { sourceId: 'web', destinationId: 'bi', decision: 'routed' as const, reason: null },
      { sourceId: 'web', destinationId: 'old', decision: 'filtered' as const, reason: 'destination_disabled' },
    ];
    const deliveries = deliveriesOf([message(routing)], [attempt(10, 'retry', 503), attempt(11, 'delivered', 200)]);
    expect(deliveries.map((row) => [row.delivery_id, row.state, row.attempts, row.last_status, row.latency_ms])).toEqual([
      ['bi/web/m-1', 'pending', 0, null, null],
      ['crm/web/m-1', 'delivered', 2, 200, 11_005],
    ]);
    // Attempts written before delivery ids carried the source count as the same delivery.
    const withOldIds = deliveriesOf([message(routing)], [attempt(10, 'retry', 503), attempt(11, 'delivered', 200)].map((row) => ({ ...row, delivery_id: 'crm/m-1' })));
    expect(withOldIds.map((row) => [row.delivery_id, row.state])).toEqual([
      ['bi/web/m-1', 'pending'],
      ['crm/m-1', 'delivered'],
    ]);
    // An attempt indexed before its message: its state alone.
    expect(deliveriesOf([], [attempt(10, 'retry', 503)]).map((row) => row.state)).toEqual(['retrying']);
  });
});
