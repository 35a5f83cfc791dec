/**
 * What the Segment API accepts, checked with plain code (a schema library is too slow
 * per message at the rates ingest must sustain). The rules are those of the Segment
 * HTTP API and of the real client libraries, which refuse the same calls before sending:
 *
 * - every message has a userId or an anonymousId (strings; a number is taken as its
 *   decimal text, as analytics-python allows numeric ids);
 * - track needs `event`, group needs `groupId`, alias needs `userId` and `previousId`;
 * - a batch item names its `type`; a single call's `type`, when given, matches the route;
 * - timestamps are date-times `parseTimestamp` reads;
 * - `context`, `integrations`, `properties` and `traits` are JSON objects when present;
 * - one message is at most 32 KB of JSON — counting the batch's `context`, which is merged
 *   into every message — and one request at most 500 KB as sent and 2 MB as written (the
 *   batch context once per message), so a small request cannot make ingest write gigabytes;
 * - a messageId is at most 100 characters (as Segment's API keeps them), the other ids at
 *   most 512; free-form fields nest at most 64 levels.
 *
 * A request is accepted or refused whole: the answer lists every problem found.
 */
import { MAX_ID_LENGTH, MAX_MESSAGE_ID_LENGTH } from '../limits.js';
import type { ApiError } from './api-error.js';
import { isJsonObject, type JsonObject } from './json-objects.js';
import { parseTimestamp } from './timestamps.js';

export const ACCEPTED_TYPES = ['identify', 'track', 'page', 'screen', 'group', 'alias'] as const;
export type AcceptedType = (typeof ACCEPTED_TYPES)[number];

/** The endpoint a request came to: a batch, or a single call of one type. */
export type CallKind = AcceptedType | 'batch';

/** Bytes of one message's JSON serialisation (32 KB). */
export const MAX_MESSAGE_BYTES = 32_768;
/** Bytes of one request body, after decompression (500 KB). */
export const MAX_REQUEST_BYTES = 512_000;
/**
 * Bytes a request may expand to once the batch's context is merged into every message (2 MB):
 * what is written to Kafka, not only what was received, is bounded.
 */
export const MAX_EXPANDED_REQUEST_BYTES = 2_000_000;
/** Problems listed in one answer; a badly broken batch of 500 should not produce a huge reply. */
export const MAX_LISTED_ERRORS = 100;

export interface FieldError {
  /** Position in the batch (0 for a single call); null for a problem of the request itself. */
  index: number | null;
  messageId: string | null;
  /** The offending field; null when the whole message is at fault. */
  field: string | null;
  message: string;
}

/** One message that passed every rule, with its fields read into their types. */
export interface ValidMessage {
  type: AcceptedType;
  messageId: string | null;
  userId: string | null;
  anonymousId: string | null;
  timestamp: number | null;
  sentAt: number | null;
  event: string | null;
  name: string | null;
  category: string | null;
  groupId: string | null;
  previousId: string | null;
  properties: JsonObject | undefined;
  traits: JsonObject | undefined;
  context: JsonObject | undefined;
  integrations: JsonObject | undefined;
}

/** What a batch carries beside its messages. */
export interface Envelope {
  context: JsonObject | undefined;
  sentAt: number | null;
}

export interface ValidRequest {
  envelope: Envelope;
  messages: ValidMessage[];
}

export type Validation = { ok: true; request: ValidRequest } | { ok: false; error: ApiError };

const TIMESTAMP_EXAMPLE = '2024-03-01T10:00:00.000Z or 2024-03-01T10:00:00+0000';

/** The 400 for a body over MAX_REQUEST_BYTES; `byteLength` undefined when decompression stopped at the limit. */
export function requestTooLarge(byteLength?: number): ApiError {
  const size = byteLength === undefined ? `is over ${MAX_REQUEST_BYTES} bytes` : `is ${byteLength} bytes`;
  return {
    status: 400,
    code: 'request_too_large',
    error: `the request body ${size} (after decompression); the limit is ${MAX_REQUEST_BYTES} bytes (500 KB) per request: send smaller batches`,
    details: { limit: MAX_REQUEST_BYTES },
  };
}

/** The write key a body carries (`writeKey` at the top of a batch or a single call). */
export function writeKeyFromBody(body: unknown): string | undefined {
  if (!isJsonObject(body)) return undefined;
  const writeKey = body.writeKey;
  return typeof writeKey === 'string' && writeKey !== '' ? writeKey : undefined;
}

export function validateRequest(body: unknown, kind: CallKind): Validation {
  if (!isJsonObject(body)) {
    return { ok: false, error: { status: 400, code: 'invalid_body', error: 'the request body must be a JSON object' } };
  }
  const errors: FieldError[] = [];
  let items: unknown[];
  let envelope: Envelope;
  if (kind === 'batch') {
    const reportBatch: Report = (field, message) => errors.push({ index: null, messageId: null, field, message });
    const batch = body.batch;
    if (!Array.isArray(batch) || batch.length === 0) {
      reportBatch('batch', Array.isArray(batch) ? 'batch must contain at least one message' : 'batch must be an array of messages');
      return rejected(errors);
    }
    items = batch;
    envelope = { context: objectField(body, 'context', reportBatch), sentAt: timestampField(body, 'sentAt', reportBatch) };
  } else {
    items = [body];
    // A single call's context and sentAt are the message's own.
    envelope = { context: undefined, sentAt: null };
  }

  // The batch context is written into every message: it counts against each message's limit
  // and, once per message, against the request's expanded size.
  const contextBytes = envelope.context === undefined ? 0 : Buffer.byteLength(JSON.stringify(envelope.context), 'utf8');
  const { oversized, expandedBytes } = measureMessages(items, contextBytes);
  if (oversized.length > 0) {
    const withContext = contextBytes > 0 ? ", counting the batch's context merged into each message" : '';
    return {
      ok: false,
      error: {
        status: 400,
        code: 'message_too_large',
        error: `${oversized.length === 1 ? 'a message is' : `${oversized.length} messages are`} larger than the limit of ${MAX_MESSAGE_BYTES} bytes (32 KB) per message${withContext}`,
        details: { limit: MAX_MESSAGE_BYTES, errors: oversized.slice(0, MAX_LISTED_ERRORS) },
      },
    };
  }
  if (expandedBytes > MAX_EXPANDED_REQUEST_BYTES) {
    return {
      ok: false,
      error: {
        status: 400,
        code: 'request_too_large',
        error:
          `the request would be written as ${expandedBytes} bytes once the batch's context (${contextBytes} bytes) is merged into each of its ` +
          `${items.length} messages; the limit is ${MAX_EXPANDED_REQUEST_BYTES} bytes (2 MB) written per request: send a smaller context or fewer messages per batch`,
        details: { limit: MAX_EXPANDED_REQUEST_BYTES, expandedBytes },
      },
    };
  }

  const messages: ValidMessage[] = [];
  const routeType = kind === 'batch' ? undefined : kind;
  items.forEach((item, index) => {
    const message = validateMessage(item, index, routeType, errors);
    if (message) messages.push(message);
  });
  if (errors.length > 0) return rejected(errors);
  return { ok: true, request: { envelope, messages } };
}

/** Records a problem with one field of the message (or batch) being read. */
type Report = (field: string, message: string) => void;

function rejected(errors: FieldError[]): { ok: false; error: ApiError } {
  const first = errors[0]!;
  const where = first.index === null ? '' : `message ${first.index}: `;
  const more = errors.length > 1 ? ` (and ${errors.length - 1} more problem${errors.length > 2 ? 's' : ''})` : '';
  return {
    ok: false,
    error: {
      status: 400,
      code: 'validation_failed',
      error: `${where}${first.message}${more}; nothing in this request was accepted`,
      details: { errors: errors.slice(0, MAX_LISTED_ERRORS), errorCount: errors.length },
    },
  };
}

function clientMessageId(item: unknown): string | null {
  if (!isJsonObject(item)) return null;
  const id = item.messageId;
  return typeof id === 'string' ? id : typeof id === 'number' ? String(id) : null;
}

/** Each message's size with the batch context merged in (an upper bound: keys may overlap), and their sum. */
function measureMessages(items: unknown[], contextBytes: number): { oversized: FieldError[]; expandedBytes: number } {
  const oversized: FieldError[] = [];
  let expandedBytes = 0;
  items.forEach((item, index) => {
    const own = Buffer.byteLength(JSON.stringify(item) ?? '', 'utf8');
    const bytes = own + contextBytes;
    expandedBytes += bytes;
    if (bytes > MAX_MESSAGE_BYTES) {
      const how = contextBytes > 0 ? ` (${own} of its own and ${contextBytes} of the batch's context)` : '';
      oversized.push({
        index,
        messageId: clientMessageId(item),
        field: null,
        message: `message ${index} is ${bytes} bytes${how}; the limit is ${MAX_MESSAGE_BYTES} bytes per message`,
      });
    }
  });
  return { oversized, expandedBytes };
}

function isAcceptedType(value: string): value is AcceptedType {
  return (ACCEPTED_TYPES as readonly string[]).includes(value);
}

const TYPE_LIST = ACCEPTED_TYPES.join(', ');

function messageType(item: JsonObject, routeType: AcceptedType | undefined, report: Report): AcceptedType | undefined {
  const given = item.type;
  if (routeType !== undefined) {
    if (given !== undefined && given !== null && given !== routeType) {
      report('type', `type ${JSON.stringify(given)} does not match the /v1/${routeType} endpoint; omit it or send ${JSON.stringify(routeType)}`);
      return undefined;
    }
    return routeType;
  }
  if (given === undefined || given === null || given === '') {
    report('type', `type is required in a batch: one of ${TYPE_LIST}`);
    return undefined;
  }
  if (typeof given !== 'string' || !isAcceptedType(given)) {
    const reason = given === 'delete' ? 'deletions go through the admin API, not the tracking API' : `use one of ${TYPE_LIST}`;
    report('type', `type ${JSON.stringify(given)} is not accepted: ${reason}`);
    return undefined;
  }
  return given;
}

function validateMessage(item: unknown, index: number, routeType: AcceptedType | undefined, errors: FieldError[]): ValidMessage | undefined {
  if (!isJsonObject(item)) {
    errors.push({ index, messageId: null, field: null, message: 'each message must be a JSON object' });
    return undefined;
  }
  const messageId = clientMessageId(item);
  const before = errors.length;
  const reported = new Set<string>();
  const report: Report = (field, message) => {
    reported.add(field);
    errors.push({ index, messageId, field, message });
  };
  // A field already refused for its JSON type is not reported again as missing.
  const requireField = (field: string, present: boolean, message: string) => {
    if (!present && !reported.has(field)) report(field, message);
  };

  const type = messageType(item, routeType, report);
  const fields: Omit<ValidMessage, 'type'> = {
    messageId: idField(item, 'messageId', report, MAX_MESSAGE_ID_LENGTH),
    userId: idField(item, 'userId', report),
    anonymousId: idField(item, 'anonymousId', report),
    timestamp: timestampField(item, 'timestamp', report),
    sentAt: timestampField(item, 'sentAt', report),
    event: textField(item, 'event', report),
    name: textField(item, 'name', report),
    category: textField(item, 'category', report),
    groupId: idField(item, 'groupId', report),
    previousId: idField(item, 'previousId', report),
    properties: objectField(item, 'properties', report),
    traits: objectField(item, 'traits', report),
    context: objectField(item, 'context', report),
    integrations: objectField(item, 'integrations', report),
  };
  if (type === undefined) return undefined;

  if (type === 'alias') {
    requireField('userId', fields.userId !== null, 'alias needs userId (the new identifier)');
    requireField('previousId', fields.previousId !== null, 'alias needs previousId (the identifier aliased from)');
  } else {
    if (!reported.has('anonymousId')) requireField('userId', fields.userId !== null || fields.anonymousId !== null, `${type} needs userId or anonymousId`);
    if (type === 'track') requireField('event', fields.event !== null && fields.event !== '', 'track needs event (the event name)');
    if (type === 'group') requireField('groupId', fields.groupId !== null, 'group needs groupId');
  }
  return errors.length === before ? { type, ...fields } : undefined;
}

/** An identifier: a non-empty string, or a number taken as its decimal text; absent, null and "" are null. */
function idField(item: JsonObject, field: string, report: Report, maxLength = MAX_ID_LENGTH): string | null {
  const value = item[field];
  if (value === undefined || value === null || value === '') return null;
  const text = typeof value === 'string' ? value : typeof value === 'number' && Number.isFinite(value) ? String(value) : undefined;
  if (text === undefined) {
    report(field, `${field} must be a string`);
    return null;
  }
  if (text.length > maxLength) {
    report(field, `${field} is ${text.length} characters; the limit is ${maxLength}`);
    return null;
  }
  return text;
}

function textField(item: JsonObject, field: string, report: Report): string | null {
  const value = item[field];
  if (value === undefined || value === null) return null;
  if (typeof value === 'string') return value;
  report(field, `${field} must be a string`);
  return null;
}

function timestampField(item: JsonObject, field: string, report: Report): number | null {
  const value = item[field];
  if (value === undefined || value === null) return null;
  const parsed = typeof value === 'string' ? parseTimestamp(value) : undefined;
  if (parsed === undefined) {
    report(field, `${field} ${JSON.stringify(value)} is not an ISO-8601 date-time (e.g. ${TIMESTAMP_EXAMPLE})`);
    return null;
  }
  return parsed;
}

function objectField(item: JsonObject, field: string, report: Report): JsonObject | undefined {
  const value = item[field];
  if (value === undefined || value === null) return undefined;
  if (isJsonObject(value)) return value;
  report(field, `${field} must be a JSON object`);
  return undefined;
}
