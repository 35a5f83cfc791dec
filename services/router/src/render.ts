/**
 * The webhook request body of one message (spec section 2), rendered once by the router
 * so that every attempt sends — and signs — the same bytes.
 *
 * The bytes are `JSON.stringify` of the body, so `JSON.stringify(JSON.parse(body))`
 * gives them back and a receiver that re-serialises before verifying the signature
 * computes the same HMAC. The free-form parts are parsed from their JSON text and
 * serialised again rather than spliced in as text, because spliced text keeps whatever
 * spacing and number spelling a direct producer used and would not survive that round
 * trip. A consequence: an integer beyond 2^53 inside properties or traits reaches the
 * receiver as the nearest double (9007199254740993 → 9007199254740992), exactly what any
 * JavaScript receiver would read anyway; ids that must stay exact belong in strings.
 *
 * Key order is fixed: version, type, messageId, userId, anonymousId, timestamp, context,
 * receivedAt, sentAt, originalTimestamp, integrations, then the type's own fields:
 *   identify: traits                    track: event, properties
 *   page: name, category, properties    screen: name, properties
 *   group: groupId, traits              alias: previousId, "Previous ID", "User ID"
 * userId, anonymousId, sentAt, originalTimestamp, integrations, name and category are
 * left out when the message has none; properties, traits and context default to {}.
 * A delete notification carries only type, messageId, userId and timestamp — no
 * version, as in the spec's example — with the messageId kept so receivers can drop a
 * repeat. Times are ISO-8601 UTC with milliseconds.
 */
import type { IngestMessage } from '@tributary/schemas';
import type { JsonObject } from '@tributary/shared/segment';
import { isoTime as iso } from './iso-time.js';
import type { FreeForm } from './message.js';

export const BODY_VERSION = 1;

export function webhookBody(message: IngestMessage, parts: FreeForm): JsonObject {
  if (message.type === 'delete') {
    return { type: 'delete', messageId: message.messageId, userId: message.userId, timestamp: iso(message.timestamp) };
  }
  const body: JsonObject = { version: BODY_VERSION, type: message.type, messageId: message.messageId };
  if (message.userId !== null) body.userId = message.userId;
  if (message.anonymousId !== null) body.anonymousId = message.anonymousId;
  body.timestamp = iso(message.timestamp);
  body.context = parts.context;
  body.receivedAt = iso(message.receivedAt);
  if (message.sentAt !== null) body.sentAt = iso(message.sentAt);
  if (message.originalTimestamp !== null) body.originalTimestamp = iso(message.originalTimestamp);
  if (parts.integrations !== null) body.integrations = parts.integrations;
  switch (message.type) {
    case 'identify':
      body.traits = parts.traits ?? {};
      break;
    case 'track':
      body.event = message.event;
      body.properties = parts.properties ?? {};
      break;
    case 'page':
      if (message.name !== null) body.name = message.name;
      if (message.category !== null) body.category = message.category;
      body.properties = parts.properties ?? {};
      break;
    case 'screen':
      if (message.name !== null) body.name = message.name;
      body.properties = parts.properties ?? {};
      break;
    case 'group':
      body.groupId = message.groupId;
      body.traits = parts.traits ?? {};
      break;
    case 'alias':
      body.previousId = message.previousId;
      // The spec's example names the two ids this way; both spellings are sent.
      body['Previous ID'] = message.previousId;
      body['User ID'] = message.userId;
      break;
  }
  return body;
}

export function renderBody(message: IngestMessage, parts: FreeForm): Buffer {
  return Buffer.from(JSON.stringify(webhookBody(message, parts)), 'utf8');
}
