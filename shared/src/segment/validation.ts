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
 * - `context`, `integrations`, `properties` and `traits` are JSON objects when present, on
 *   a message and (`context`, `integrations`) at the top of a batch;
 * - one message is at most 32 KB of JSON — counting the batch's `context` and `integrations`,
 *   which are merged into every message — and one request at most 500 KB as sent and 2 MB as
 *   written (the batch's context and integrations once per message, and every
 *   `context.integrations` twice, as normalise.ts writes it both in the context and in the
 *   record's integrations), so a small request cannot make ingest write gigabytes;
 * - a messageId is at most 100 characters (as Segment's API keeps them), the other ids at
 *   most 512; free-form fields nest at most 64 levels (checked once merged: segment-call.ts).
 *
 * A request is accepted or refused whole: the answer lists the first problems found and
 * counts them all.
 */
import { MAX_ID_LENGTH, MAX_MESSAGE_ID_LENGTH } from '../limits.js';
import type { ApiError } from './api-error.js';
import { echoedJson } from './echo.js';
import { isJsonObject, type JsonObject } from './json-objects.js';
import { ProblemList } from './problems.js';
import { parseTimestamp } from './timestamps.js';

export { MAX_LISTED_ERRORS, type FieldError } from './problems.js';

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

/** What a batch carries beside its messages; `context` and `integrations` apply to each of them. */
export interface Envelope {
  context: JsonObject | undefined;
  integrations: JsonObject | undefined;
  sentAt: number | null;
}

export interface ValidRequest {
  envelope: Envelope;
  messages: ValidMessage[];
  /**
   * Bytes of JSON the messages are written as: each message's own, plus the batch's `context`
   * and `integrations` once per message, plus every `context.integrations` again (normalise.ts
   * writes it inside the context and in the record's integrations). An upper bound — merged
   * keys may overlap — at most MAX_EXPANDED_REQUEST_BYTES; what the request costs downstream,
   * however small its body.
   */
  expandedBytes: number;
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
  const problems = new ProblemList();
  let items: unknown[];
  let envelope: Envelope;
  if (kind === 'batch') {
    const reportBatch: Report = (field, message) => problems.add(null, null, field, message);
    const batch = body.batch;
    if (!Array.isArray(batch) || batch.length === 0) {
      reportBatch('batch', Array.isArray(batch) ? 'batch must contain at least one message' : 'batch must be an array of messages');
      return rejected(problems);
    }
    items = batch;
    envelope = {
      context: objectField(body, 'context', reportBatch),
      integrations: objectField(body, 'integrations', reportBatch),
      sentAt: timestampField(body, 'sentAt', reportBatch),
    };
  } else {
    items = [body];
    // A single call's context, integrations and sentAt are the message's own.
    envelope = { context: undefined, integrations: undefined, sentAt: null };
  }

  // The batch's context and integrations are written into every message: they count against
  // each message's limit and, once per message, against the request's expanded size — as do
  // the second copies of context.integrations, which the per-message limit (the client's
  // message as Segment counts it) leaves out.
  const shared = sharedParts(envelope);
  const { oversized, expandedBytes } = measureMessages(items, shared);
  if (oversized.count > 0) {
    const withShared = shared.bytes > 0 ? `, counting the batch's ${shared.name} merged into each message` : '';
    return {
      ok: false,
      error: {
        status: 400,
        code: 'message_too_large',
        error: `${oversized.count === 1 ? 'a message is' : `${oversized.count} messages are`} larger than the limit of ${MAX_MESSAGE_BYTES} bytes (32 KB) per message${withShared}`,
        details: { limit: MAX_MESSAGE_BYTES, errors: oversized.listed },
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
          `the request would be written as ${expandedBytes} bytes once the batch's ${shared.name} (${shared.bytes} bytes${shared.writtenTwice > 0 ? `, of which context.integrations' ${shared.writtenTwice} are written twice: in the context and in integrations` : ''}) ${shared.verb} merged into each of its ` +
          `${items.length} messages; the limit is ${MAX_EXPANDED_REQUEST_BYTES} bytes (2 MB) written per request: send a smaller ${shared.name} or fewer messages per batch`,
        details: { limit: MAX_EXPANDED_REQUEST_BYTES, expandedBytes },
      },
    };
  }

  const messages: ValidMessage[] = [];
  const routeType = kind === 'batch' ? undefined : kind;
  items.forEach((item, index) => {
    const message = validateMessage(item, index, routeType, problems);
    if (message) messages.push(message);
  });
  if (problems.count > 0) return rejected(problems);
  return { ok: true, request: { envelope, messages, expandedBytes } };
}

/** Records a problem with one field of the message (or batch) being read. */
type Report = (field: string, message: string) => void;

function rejected(problems: ProblemList): { ok: false; error: ApiError } {
  return { ok: false, error: { status: 400, code: 'validation_failed', error: problems.sentence(), details: problems.details() } };
}

/** What of a batch is merged into each of its messages, and its bytes as JSON. */
interface SharedParts {
  bytes: number;
  /** Bytes of the batch's `context.integrations`, written a second time in each message's integrations. */
  writtenTwice: number;
  /** How the answers name it: "context", "integrations" or "context and integrations". */
  name: string;
  verb: 'is' | 'are';
}

function jsonBytes(value: unknown): number {
  return Buffer.byteLength(JSON.stringify(value) ?? '', 'utf8');
}

/** Bytes of `context.integrations` when it is an object: normalise.ts writes it a second time, into the record's integrations. */
function contextIntegrationsBytes(context: unknown): number {
  if (!isJsonObject(context) || !Object.hasOwn(context, 'integrations')) return 0;
  const integrations = context.integrations;
  return isJsonObject(integrations) ? jsonBytes(integrations) : 0;
}

function sharedParts({ context, integrations }: Envelope): SharedParts {
  const bytes = (context === undefined ? 0 : jsonBytes(context)) + (integrations === undefined ? 0 : jsonBytes(integrations));
  const writtenTwice = contextIntegrationsBytes(context);
  if (integrations !== undefined && context !== undefined) return { bytes, writtenTwice, name: 'context and integrations', verb: 'are' };
  return { bytes, writtenTwice, name: integrations !== undefined ? 'integrations' : 'context', verb: 'is' };
}

function clientMessageId(item: unknown): string | null {
  if (!isJsonObject(item)) return null;
  const id = item.messageId;
  return typeof id === 'string' ? id : typeof id === 'number' ? String(id) : null;
}

/**
 * Each message's size with the batch's shared parts merged in (an upper bound: keys may
 * overlap), held to the per-message limit; and the sum of what they are written as, which
 * also counts each `context.integrations` a second time.
 */
function measureMessages(items: unknown[], shared: SharedParts): { oversized: ProblemList; expandedBytes: number } {
  const oversized = new ProblemList();
  let expandedBytes = 0;
  items.forEach((item, index) => {
    const own = jsonBytes(item);
    const bytes = own + shared.bytes;
    expandedBytes += bytes + shared.writtenTwice + (isJsonObject(item) ? contextIntegrationsBytes(item.context) : 0);
    if (bytes > MAX_MESSAGE_BYTES) {
      const how = shared.bytes > 0 ? ` (${own} of its own and ${shared.bytes} of the batch's ${shared.name})` : '';
      oversized.add(index, clientMessageId(item), null, `message ${index} is ${bytes} bytes${how}; the limit is ${MAX_MESSAGE_BYTES} bytes per message`);
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
      report('type', `type ${echoedJson(given)} does not match the /v1/${routeType} endpoint; omit it or send ${JSON.stringify(routeType)}`);
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
    report('type', `type ${echoedJson(given)} is not accepted: ${reason}`);
    return undefined;
  }
  return given;
}

function validateMessage(item: unknown, index: number, routeType: AcceptedType | undefined, problems: ProblemList): ValidMessage | undefined {
  if (!isJsonObject(item)) {
    problems.add(index, null, null, 'each message must be a JSON object');
    return undefined;
  }
  const messageId = clientMessageId(item);
  const before = problems.count;
  const reported = new Set<string>();
  const report: Report = (field, message) => {
    reported.add(field);
    problems.add(index, messageId, field, message);
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
  return problems.count === before ? { type, ...fields } : undefined;
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
    report(field, `${field} ${echoedJson(value)} is not an ISO-8601 date-time (e.g. ${TIMESTAMP_EXAMPLE})`);
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
