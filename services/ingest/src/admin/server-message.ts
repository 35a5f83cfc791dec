/**
 * Ingest messages the admin API writes on its own behalf (deletion notifications, audience
 * syncs): no client sent them, so there is no sentAt or client timestamp, and everything a
 * client would fill in is null unless the caller sets it.
 */
import type { IngestMessage } from '@tributary/schemas';

export type ServerMessageFields = Pick<IngestMessage, 'messageId' | 'type' | 'sourceId' | 'userId'> & Partial<Pick<IngestMessage, 'traits' | 'context'>>;

export function serverMessage(fields: ServerMessageFields, now: number): IngestMessage {
  return {
    anonymousId: null,
    timestamp: now,
    originalTimestamp: null,
    sentAt: null,
    receivedAt: now,
    event: null,
    name: null,
    category: null,
    groupId: null,
    previousId: null,
    properties: null,
    traits: null,
    context: null,
    integrations: null,
    ...fields,
  };
}
