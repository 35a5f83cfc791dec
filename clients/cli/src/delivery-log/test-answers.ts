/** Delivery-log answers for the CLI's tests: a plausible value of each, `fields` set what a test cares about. */
import type { Attempt, AttemptTarget, DeliveryStatus, DeliverySummary, IndexedMessage, TailMessage } from './answers.js';

export function testTarget(fields: Partial<AttemptTarget> = {}): AttemptTarget {
  return {
    urlIndex: 0,
    origin: 'https://hooks.example.com',
    outcome: 'http_error',
    status: 503,
    errorClass: 'http_status',
    error: 'HTTP 503',
    durationMs: 11,
    responseBody: 'busy, try later',
    retryAfterMs: null,
    ...fields,
  };
}

export function testAttempt(fields: Partial<Attempt> = {}): Attempt {
  return {
    id: '1-42',
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
    startedAt: '2026-11-25T10:00:00.100Z',
    durationMs: 12,
    status: 503,
    error: 'webhooks[0] https://hooks.example.com: HTTP 503',
    deferReason: null,
    deadReason: null,
    nextAttemptAt: '2026-11-25T10:00:10.112Z',
    tier: '10s',
    receivedAt: '2026-11-25T10:00:00.000Z',
    replays: 0,
    targets: [testTarget()],
    ...fields,
  };
}

/** The second attempt of testAttempt's delivery, which delivered it. */
export function testDelivered(fields: Partial<Attempt> = {}): Attempt {
  return testAttempt({
    id: '1-57',
    attempt: 2,
    outcome: 'delivered',
    lane: 'retry',
    startedAt: '2026-11-25T10:00:10.200Z',
    durationMs: 8,
    status: 200,
    error: null,
    nextAttemptAt: null,
    tier: null,
    targets: [testTarget({ outcome: 'success', status: 200, errorClass: null, error: null, durationMs: 8, responseBody: 'thanks' })],
    ...fields,
  });
}

export function testIndexedMessage(fields: Partial<IndexedMessage> = {}): IndexedMessage {
  return {
    sourceId: 'web',
    type: 'track',
    userId: 'u-1',
    anonymousId: null,
    event: 'Signed Up',
    receivedAt: '2026-11-25T10:00:00.000Z',
    timestamp: '2026-11-25T09:59:59.500Z',
    message: { messageId: 'm-1', type: 'track', event: 'Signed Up', properties: { plan: 'pro' } },
    ...fields,
  };
}

export function testDeliveryStatus(fields: Partial<DeliveryStatus> = {}): DeliveryStatus {
  return {
    deliveryId: 'crm/m-1',
    sourceId: 'web',
    destinationId: 'crm',
    state: 'delivered',
    attempts: 2,
    firstAttemptAt: '2026-11-25T10:00:00.100Z',
    lastAttemptAt: '2026-11-25T10:00:10.200Z',
    nextAttemptAt: null,
    lastStatus: 200,
    lastError: null,
    deliveredAt: '2026-11-25T10:00:10.208Z',
    latencyMs: 10_208,
    ...fields,
  };
}

export function testTailMessage(fields: Partial<TailMessage> = {}): TailMessage {
  return {
    sourceId: 'web',
    messageId: 'm-1',
    type: 'track',
    userId: 'u-1',
    anonymousId: null,
    event: 'Signed Up',
    receivedAt: '2026-11-25T10:00:00.000Z',
    message: { messageId: 'm-1', type: 'track', event: 'Signed Up' },
    ...fields,
  };
}

export function testSummary(fields: Partial<DeliverySummary> = {}): DeliverySummary {
  return {
    destinationId: 'crm',
    since: '2026-11-25T09:00:00.000Z',
    until: '2026-11-25T10:00:00.000Z',
    attempts: 120,
    delivered: 100,
    failed: 20,
    deferred: 300,
    deadLetters: 2,
    successRate: 0.833,
    latency: { deliveryP50Ms: 40, deliveryP95Ms: 900, attemptP50Ms: 12, attemptP95Ms: 80 },
    retriesPending: 5,
    circuit: { state: 'closed', backlog: { firstAttempts: 0, retries: 0, inFlight: 0 }, updatedAt: '2026-11-25T09:59:58.000Z' },
    ...fields,
  };
}
