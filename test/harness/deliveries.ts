import { deliveryKey, type Delivery } from '@tributary/schemas';

/**
 * A Delivery record of a track message, as the router writes it before any attempt, for
 * tests that write deliveries, retry records or dead letters straight to Kafka; `fields`
 * sets whatever the test cares about (attempts and their outcome, for instance).
 */
export function testDelivery(destinationId: string, messageId: string, fields: Partial<Omit<Delivery, 'deliveryId' | 'destinationId' | 'messageId'>> = {}): Delivery {
  const receivedAt = fields.receivedAt ?? Date.now();
  return {
    deliveryId: deliveryKey(destinationId, fields.sourceId ?? 'web', messageId),
    destinationId,
    sourceId: 'web',
    messageId,
    messageType: 'track',
    userId: 'u-1',
    anonymousId: null,
    body: Buffer.from(JSON.stringify({ version: 1, type: 'track', messageId })),
    receivedAt,
    routedAt: receivedAt,
    attempts: 0,
    firstAttemptAt: null,
    lastError: null,
    lastStatus: null,
    replays: 0,
    ...fields,
  };
}
