/**
 * A validated call turned into the record the pipeline carries on the ingest topic:
 * a messageId for every message, server receipt time, the skew-corrected timestamp
 * beside the client's own, the batch context merged under the message's (with the
 * request's address as `context.ip` when the client sent none), one integrations object
 * (the batch's under the message's), and the free-form parts as JSON text.
 *
 * Fields are kept as the client sent them. In particular a page's or screen's `name`
 * is the top-level `name`; analytics.js also repeats it in `properties.name`, and those
 * properties are stored untouched (analytics-go v2 sends its Page `Traits` — url, title,
 * referrer, path — as `properties`, so they arrive there too). Top-level fields outside
 * the Segment spec (`_metadata`, `channel`, `version`, `writeKey`, a batch's own
 * `messageId`) are not part of the record.
 */
import type { IngestMessage } from '@tributary/schemas';
import { correctedTimestamp } from './clock-skew.js';
import { mergeContext, mergeIntegrations, mergeUnder, type JsonObject } from './json-objects.js';
import type { Envelope, ValidMessage } from './validation.js';

export interface Receipt {
  sourceId: string;
  receivedAt: number;
  newMessageId: () => string;
  /**
   * The address the request came from (ingest over HTTP; unset for @tributary/producer, which
   * has none). Hosted Segment stores it as `context.ip` when the client sent none — analytics.js
   * never sends one — so destinations that geolocate events find it where they look.
   */
  ip?: string;
}

function jsonText(value: JsonObject | undefined): string | null {
  return value === undefined ? null : JSON.stringify(value);
}

/**
 * The destinations a message names: within the batch and within the message, the top-level
 * `integrations` over `context.integrations`, per key; then the batch's under the message's,
 * deep-merged as the context is, so `{"integrations":{"All":false},"batch":[…]}` holds for
 * every call that does not say otherwise (Segment's batch API applies it to each call).
 */
function integrationsOf(message: ValidMessage, envelope: Envelope): JsonObject | undefined {
  return mergeUnder(mergeIntegrations(envelope.integrations, envelope.context), mergeIntegrations(message.integrations, message.context));
}

/**
 * The context with the request's address as `ip`, unless the client put an `ip` key there
 * (whatever its value: `null` or `"0.0.0.0"` is how a client opts out). A new object: the
 * merged context may be the batch's own, shared by every message.
 */
function withRequestIp(context: JsonObject | undefined, ip: string | undefined): JsonObject | undefined {
  if (ip === undefined || (context !== undefined && Object.hasOwn(context, 'ip'))) return context;
  return { ...context, ip };
}

export function toIngestMessage(message: ValidMessage, envelope: Envelope, receipt: Receipt): IngestMessage {
  const context = withRequestIp(mergeContext(envelope.context, message.context), receipt.ip);
  const sentAt = message.sentAt ?? envelope.sentAt;
  return {
    messageId: message.messageId ?? receipt.newMessageId(),
    type: message.type,
    sourceId: receipt.sourceId,
    userId: message.userId,
    anonymousId: message.anonymousId,
    timestamp: correctedTimestamp({ originalTimestamp: message.timestamp, sentAt, receivedAt: receipt.receivedAt }),
    originalTimestamp: message.timestamp,
    sentAt,
    receivedAt: receipt.receivedAt,
    event: message.event,
    name: message.name,
    category: message.category,
    groupId: message.groupId,
    previousId: message.previousId,
    properties: jsonText(message.properties),
    traits: jsonText(message.traits),
    context: jsonText(context),
    integrations: jsonText(integrationsOf(message, envelope)),
  };
}

/** The record key: anonymousId, else userId, so one visitor's calls stay in order on one partition. */
export function recordKey(message: Pick<IngestMessage, 'anonymousId' | 'userId'>): string {
  const key = message.anonymousId ?? message.userId;
  if (key === null) throw new Error('a validated message has a userId or an anonymousId');
  return key;
}
