/**
 * Records for the indexer's tests: a DeliveryAttempt as the dispatcher writes it and an
 * IngestMessage as ingest writes it, with whatever a test sets.
 */
import type { DeliveryAttempt, Destination, IngestMessage, Source } from '@tributary/schemas';
import { deliveryKey } from '@tributary/schemas';

export function testAttempt(fields: Partial<DeliveryAttempt> & { messageId: string; destinationId: string }): DeliveryAttempt {
  const startedAt = fields.startedAt ?? Date.now();
  return {
    deliveryId: deliveryKey(fields.destinationId, fields.sourceId ?? 'web', fields.messageId),
    sourceId: 'web',
    messageType: 'track',
    userId: 'u-1',
    anonymousId: null,
    kind: 'attempt',
    attempt: 1,
    outcome: 'delivered',
    lane: 'first',
    durationMs: 12,
    status: 200,
    error: null,
    deferReason: null,
    deadReason: null,
    nextAttemptAt: null,
    tier: null,
    receivedAt: startedAt - 100,
    replays: 0,
    targets: [
      {
        urlIndex: 0,
        origin: 'https://hooks.example.com',
        outcome: fields.status === undefined || (fields.status !== null && fields.status < 300) ? 'success' : 'http_error',
        status: fields.status === undefined ? 200 : fields.status,
        errorClass: null,
        error: null,
        durationMs: 11,
        responseBody: Buffer.from('ok'),
        retryAfterMs: null,
      },
    ],
    ...fields,
    startedAt,
  };
}

export function testMessage(fields: Partial<IngestMessage> & { messageId: string }): IngestMessage {
  const receivedAt = fields.receivedAt ?? Date.now();
  return {
    type: 'track',
    sourceId: 'web',
    userId: 'u-1',
    anonymousId: null,
    timestamp: receivedAt,
    originalTimestamp: null,
    sentAt: null,
    event: 'Signed Up',
    name: null,
    category: null,
    groupId: null,
    previousId: null,
    properties: '{"plan":"pro"}',
    traits: null,
    context: '{"library":{"name":"test"}}',
    integrations: null,
    ...fields,
    receivedAt,
  };
}

export const testSource = (fields: Partial<Source> = {}): Source => ({ id: 'web', name: 'Web', writeKey: 'wk_web', enabled: true, ...fields });

export const testDestination = (id: string, fields: Partial<Destination> = {}): Destination => ({
  id,
  name: id,
  type: 'webhooks',
  sources: ['web'],
  enabled: true,
  settings: { sharedSecret: null, standardWebhooksSecret: null, webhooks: [{ url: 'https://hooks.example.com/x', headers: {} }] },
  ...fields,
});

/** A routing config of fixed sources and destinations. */
export function testConfig(sources: Source[], destinations: Destination[]) {
  return {
    source: (id: string) => sources.find((source) => source.id === id),
    destinationsForSource: (sourceId: string) => destinations.filter((destination) => destination.sources.includes(sourceId)),
  };
}
