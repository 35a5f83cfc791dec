import { describe, expect, it } from 'vitest';
import {
  avroType,
  loadSchema,
  SCHEMA_NAMES,
  TOPICS,
  topicNames,
  type DeliveryAttempt,
  type DestinationHealth,
  type QuarantinedRecord,
  type AudienceMembership,
  type ConfigEntry,
  type DeadLetter,
  type Delivery,
  type IngestMessage,
  type RetryRecord,
  type SchemaName,
} from './index.js';

const type = (name: SchemaName) => avroType(name);

const delivery: Delivery = {
  deliveryId: 'crm-hooks/m-1',
  destinationId: 'crm-hooks',
  sourceId: 'web',
  messageId: 'm-1',
  messageType: 'track',
  userId: 'u-1',
  anonymousId: null,
  body: Buffer.from('{"version":1}'),
  receivedAt: 1,
  routedAt: 2,
  attempts: 0,
  firstAttemptAt: null,
  lastError: null,
  lastStatus: null,
  replays: 0,
};

describe('Avro schemas', () => {
  it('all parse', () => {
    for (const name of SCHEMA_NAMES) {
      expect(() => type(name)).not.toThrow();
    }
  });

  it('embed exactly the Delivery record in retry and dead-letter values', () => {
    const standalone = loadSchema('delivery');
    for (const name of ['retry', 'dlq'] as const) {
      const embedded = loadSchema(name).fields.find((field) => field.name === 'delivery')!.type;
      expect(embedded).toEqual(standalone);
    }
  });

  it('accept values of the TypeScript shapes, and round-trip them', () => {
    const ingest: IngestMessage = {
      messageId: 'm-1', type: 'alias', sourceId: 'web', userId: 'u', anonymousId: null, timestamp: 1, originalTimestamp: null,
      sentAt: null, receivedAt: 2, event: null, name: null, category: null, groupId: null, previousId: 'a', properties: null,
      traits: null, context: '{}', integrations: null,
    };
    const config: ConfigEntry = {
      entity: { id: 'd', name: 'd', type: 'webhooks', sources: ['web'], enabled: true, settings: { sharedSecret: null, standardWebhooksSecret: null, webhooks: [{ url: 'https://x', headers: { a: 'b' } }] } },
      updatedAt: 3,
    };
    const retry: RetryRecord = { delivery, dueAt: 5, tier: '10s' };
    const dead: DeadLetter = { delivery, reason: 'expired', status: 503, error: 'gave up', deadAt: 6 };
    const membership: AudienceMembership = { audience: 'High Value', userId: 'u', sourceId: 'web', member: true, updatedAt: 7, value: '"gold"' };
    const quarantined: QuarantinedRecord = {
      service: 'router', sourceTopic: 'tributary.ingest.v1', partition: 3, offset: 2 ** 40, reason: 'not_framed', error: 'no magic byte',
      key: Buffer.from('u'), value: Buffer.from([1, 2, 3]), valueSize: 3, recordTimestamp: 8, quarantinedAt: 9,
    };
    const attempt: DeliveryAttempt = {
      deliveryId: 'crm-hooks/m-1', messageId: 'm-1', sourceId: 'web', destinationId: 'crm-hooks', messageType: 'track', userId: 'u-1',
      anonymousId: null, kind: 'attempt', attempt: 1, outcome: 'retry', lane: 'first', startedAt: 10, durationMs: 12, status: 503,
      error: 'HTTP 503', deferReason: null, deadReason: null, nextAttemptAt: 10_010, tier: '10s', receivedAt: 1, replays: 0,
      targets: [{ urlIndex: 0, origin: 'https://x', outcome: 'http_error', status: 503, errorClass: 'http_status', error: 'HTTP 503', durationMs: 12, responseBody: Buffer.from('busy'), retryAfterMs: 30_000 }],
    };
    const health: DestinationHealth = {
      destinationId: 'crm-hooks', instanceId: 'dispatcher-0', state: 'open', stateSince: 1, openUntil: 2, openings: 1, consecutiveFailures: 5,
      windowRequests: 20, windowFailures: 20, lastSuccessAt: null, lastFailureAt: 3, lastError: 'HTTP 503', queuedFirst: 0, queuedRetries: 2,
      inFlight: 0, congestedSince: 5, attempts: 40, deferrals: 100, updatedAt: 4,
    };
    const cases: Array<[SchemaName, unknown]> = [
      ['ingest', ingest],
      ['config', config],
      ['delivery', delivery],
      ['retry', retry],
      ['dlq', dead],
      ['audiences', membership],
      ['quarantine', quarantined],
      ['attempt', attempt],
      ['destination-health', health],
    ];
    for (const [name, value] of cases) {
      const t = type(name);
      expect(t.isValid(value), name).toBe(true);
      expect(t.fromBuffer(t.toBuffer(value))).toEqual(value);
    }
  });

  it('names topics within a namespace, retry tiers after their delay', () => {
    expect(TOPICS.ingest).toBe('tributary.ingest.v1');
    expect(TOPICS.retry('10s')).toBe('tributary.retry.10s.v1');
    expect(() => TOPICS.retry('1 h')).toThrow();
    const isolated = topicNames('t-42');
    expect(isolated.deadLetters).toBe('t-42.deliveries.dlq.v1');
    expect(isolated.dueRetries).toBe('t-42.deliveries.retries.v1');
    expect(isolated.quarantine).toBe('t-42.quarantine.v1');
    expect(isolated.retryTier('t-42.retry.100ms.v1')).toBe('100ms');
    expect(isolated.retryTier('tributary.retry.100ms.v1')).toBeUndefined();
    expect(() => topicNames('Bad.Name')).toThrow(/namespace/);
  });
});
