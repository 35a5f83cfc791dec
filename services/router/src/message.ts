/**
 * What the router accepts from the ingest topic. Ingest validates what it writes, but the
 * topic is a public contract that producers may write to directly, so every record is
 * checked for what routing and rendering need — within the same limits ingest applies;
 * one that fails is reported as an `InvalidMessage` and quarantined with its reason.
 */
import type { IngestMessage, MessageType } from '@tributary/schemas';
import { MESSAGE_TYPES } from '@tributary/schemas';
import { isDateMs, MAX_ID_LENGTH, MAX_JSON_DEPTH, MAX_MESSAGE_ID_LENGTH, nestsDeeperThan, QUARANTINE_REASONS, undecodableCause, type QuarantineReason } from '@tributary/shared';
import { isJsonObject, type JsonObject } from '@tributary/shared/segment';

/** Why a record is invalid: the reasons it is quarantined with. */
export type InvalidReason = QuarantineReason;

export const INVALID_REASONS: readonly InvalidReason[] = QUARANTINE_REASONS;

export class InvalidMessage extends Error {
  constructor(
    readonly reason: InvalidReason,
    message: string,
  ) {
    super(message);
    this.name = 'InvalidMessage';
  }
}

/** The free-form parts of a message, parsed from the JSON text they travel as. */
export interface FreeForm {
  context: JsonObject;
  integrations: JsonObject | null;
  properties: JsonObject | null;
  traits: JsonObject | null;
}

const present = (value: string | null): value is string => value !== null && value !== '';

/** What each type needs besides a messageId, a sourceId and valid times. */
function missingFor(message: IngestMessage): string | undefined {
  const identified = present(message.userId) || present(message.anonymousId);
  switch (message.type) {
    case 'track':
      if (!identified) return 'userId or anonymousId';
      return present(message.event) ? undefined : 'event';
    case 'group':
      if (!identified) return 'userId or anonymousId';
      return present(message.groupId) ? undefined : 'groupId';
    case 'alias':
      if (!present(message.userId)) return 'userId';
      return present(message.previousId) ? undefined : 'previousId';
    case 'delete':
      return present(message.userId) ? undefined : 'userId';
    default:
      return identified ? undefined : 'userId or anonymousId';
  }
}

function checkTime(field: string, value: number | null, required: boolean): void {
  if (value === null && !required) return;
  if (!isDateMs(value)) {
    throw new InvalidMessage('invalid_timestamp', `${field} is not a valid time: ${String(value)}`);
  }
}

/** Throws an `InvalidMessage` naming the first problem; cheap, so it runs on every record. */
export function checkMessage(message: IngestMessage): void {
  if (!present(message.messageId)) throw new InvalidMessage('missing_field', 'messageId is missing');
  if (!present(message.sourceId)) throw new InvalidMessage('missing_field', 'sourceId is missing');
  if (message.sourceId.length > MAX_ID_LENGTH) throw new InvalidMessage('invalid_id', `sourceId is ${message.sourceId.length} characters; the limit is ${MAX_ID_LENGTH}`);
  if (!MESSAGE_TYPES.includes(message.type as MessageType)) {
    throw new InvalidMessage('missing_field', `type ${JSON.stringify(message.type)} is not one of ${MESSAGE_TYPES.join(', ')}`);
  }
  const missing = missingFor(message);
  if (missing !== undefined) throw new InvalidMessage('missing_field', `${message.type} needs ${missing}`);
  if (message.messageId.length > MAX_MESSAGE_ID_LENGTH) {
    throw new InvalidMessage('invalid_id', `messageId is ${message.messageId.length} characters; the limit is ${MAX_MESSAGE_ID_LENGTH}`);
  }
  for (const field of ['userId', 'anonymousId', 'groupId', 'previousId'] as const) {
    const value = message[field];
    if (value !== null && value.length > MAX_ID_LENGTH) throw new InvalidMessage('invalid_id', `${field} is ${value.length} characters; the limit is ${MAX_ID_LENGTH}`);
  }
  checkTime('timestamp', message.timestamp, true);
  checkTime('receivedAt', message.receivedAt, true);
  checkTime('sentAt', message.sentAt, false);
  checkTime('originalTimestamp', message.originalTimestamp, false);
}

function parseObject(field: string, text: string | null): JsonObject | null {
  if (text === null) return null;
  // Checked by a scan before parsing: rendering recurses, and a record nesting thousands deep
  // would overflow the stack there.
  if (nestsDeeperThan(text, MAX_JSON_DEPTH)) throw new InvalidMessage('too_deep', `${field} nests more than ${MAX_JSON_DEPTH} levels deep`);
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new InvalidMessage('invalid_json', `${field} is not JSON: ${(error as Error).message}`);
  }
  if (!isJsonObject(value)) throw new InvalidMessage('invalid_json', `${field} must be a JSON object`);
  return value;
}

/**
 * Parses the JSON-text fields. Only messages that some destination would receive are
 * parsed, so a malformed field is found (and the record skipped) only then.
 */
export function parseFreeForm(message: IngestMessage): FreeForm {
  return {
    context: parseObject('context', message.context) ?? {},
    integrations: parseObject('integrations', message.integrations),
    properties: parseObject('properties', message.properties),
    traits: parseObject('traits', message.traits),
  };
}

/**
 * Sorts a failure to decode an ingest record: one that can never be decoded (not framed, an
 * unknown schema id, truncated Avro) is invalid for good; any other (the registry
 * unreachable) may pass, so it is returned as `undefined` and the caller retries the batch
 * rather than drop records.
 */
export function classifyDecodeError(error: unknown): InvalidMessage | undefined {
  const cause = undecodableCause(error);
  return cause === undefined ? undefined : new InvalidMessage(cause.reason, cause.error);
}
