/**
 * Compares what a client library sent (its driver's manifest) with what arrived on the
 * ingest topic, and lists every difference in words — all of them at once, so a run
 * against a half-finished ingest reads as a compatibility report rather than stopping at
 * the first mismatch.
 *
 * What must hold, per message: it arrived exactly once (by message id, and no second
 * copy of the same content under another id); type, source and the typed fields are the
 * caller's; properties / traits are the caller's objects; the context holds the caller's
 * context plus the library's `library` entry; an integrations map is kept; the record key
 * is anonymousId ?? userId; and the times are epoch milliseconds read correctly from
 * what the library put on the wire — `originalTimestamp` exactly the client's timestamp,
 * `sentAt` exactly the client's sentAt, `timestamp` either the client's or that value
 * corrected for clock skew (receivedAt - sentAt + originalTimestamp), `receivedAt`
 * during the run. A request's body is a batch, or a single message (analytics.js posts
 * each call alone to its short paths).
 */
import { isDeepStrictEqual } from 'node:util';
import type { IngestMessage } from '@tributary/schemas';
import { contentKey, type JsonObject, type JsonValue, type Manifest, type SentCall, type WireRequest } from './manifest.js';

export interface ArrivedRecord {
  key: string | null;
  partition: number;
  offset: string;
  value: IngestMessage;
}

export interface CheckContext {
  sourceId: string;
  /** Wall clock before the driver started and after it finished. */
  startedAt: number;
  finishedAt: number;
}

/** How far a library's own "now" may be from the run's window: whole-second clocks and scheduling. */
const NOW_TOLERANCE_MS = 2_000;

const WIRE_TIME = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?(Z|([+-])(\d{2}):?(\d{2}))$/;

/**
 * Epoch milliseconds of a timestamp as the four libraries write it (`toISOString()`,
 * Python's `isoformat()`, Go v2's `%Y-%m-%dT%H:%M:%S%z`), fractions beyond milliseconds
 * truncated; undefined for anything else, so a new format shows up as a problem.
 */
export function parseWireTimestamp(text: string): number | undefined {
  const match = WIRE_TIME.exec(text);
  if (!match) return undefined;
  const [, year, month, day, hour, minute, second, fraction = '', zone, sign, offsetHours, offsetMinutes] = match;
  const utc = Date.UTC(Number(year), Number(month) - 1, Number(day), Number(hour), Number(minute), Number(second), Number(fraction.slice(0, 3).padEnd(3, '0')));
  const offset = zone === 'Z' ? 0 : (sign === '-' ? -1 : 1) * (Number(offsetHours) * 60 + Number(offsetMinutes)) * 60_000;
  return utc - offset;
}

function time(ms: number | null | undefined): string {
  return typeof ms === 'number' ? `${ms} (${new Date(ms).toISOString()})` : String(ms);
}

function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function parseJsonObject(text: string | null, field: string, problems: string[]): JsonObject | null | undefined {
  if (text === null) return null;
  try {
    const parsed = JSON.parse(text) as JsonValue;
    if (isObject(parsed)) return parsed;
    problems.push(`${field} is JSON but not an object: ${text}`);
  } catch {
    problems.push(`${field} is not JSON: ${text}`);
  }
  return undefined;
}

function isEmpty(value: JsonObject | null): boolean {
  return value === null || Object.keys(value).length === 0;
}

interface WireMessage {
  message: JsonObject;
  /** The request body it came in: a batch, or the message itself. */
  body: JsonObject;
}

/**
 * The messages a request body carries: a batch's `batch`, or the body itself when it is one
 * message (analytics.js posts each call alone to /v1/i, /v1/t, …).
 */
function requestMessages(body: JsonObject): JsonValue[] {
  if (Array.isArray(body.batch)) return body.batch;
  return typeof body.type === 'string' && !('batch' in body) ? [body] : [];
}

function accepted(request: WireRequest): boolean {
  return request.error === undefined && (request.status === undefined || (request.status >= 200 && request.status < 300));
}

/** The messages of the requests the endpoint accepted, by message id (the last attempt wins). */
function wireMessages(requests: WireRequest[]): Map<string, WireMessage> {
  const byId = new Map<string, WireMessage>();
  for (const request of requests.filter(accepted)) {
    for (const message of requestMessages(request.body)) {
      if (isObject(message) && typeof message.messageId === 'string') byId.set(message.messageId, { message, body: request.body });
    }
  }
  return byId;
}

function checkRequests(manifest: Manifest): string[] {
  const problems = manifest.errors.map((error) => `the library reported: ${error}`);
  manifest.requests.forEach((request, index) => {
    if (accepted(request)) return;
    const answer = request.status === undefined ? '' : ` ingest answered ${request.status} ${request.response ?? ''}`.trimEnd();
    const error = request.error === undefined ? '' : ` (${request.error})`;
    problems.push(`request ${index + 1} (POST ${request.path}, ${requestMessages(request.body).length} messages) was refused:${answer}${error}`);
  });
  return problems;
}

function checkFields(call: SentCall, record: ArrivedRecord, manifest: Manifest, context: CheckContext): string[] {
  const problems: string[] = [];
  const value = record.value;
  const expectField = (field: keyof IngestMessage, expected: unknown) => {
    if (!isDeepStrictEqual(value[field], expected)) problems.push(`${field} is ${JSON.stringify(value[field])}, expected ${JSON.stringify(expected)}`);
  };
  expectField('type', call.type);
  expectField('sourceId', context.sourceId);
  expectField('userId', call.userId ?? null);
  expectField('anonymousId', call.anonymousId ?? null);
  expectField('event', call.event ?? null);
  expectField('name', call.name ?? null);
  expectField('category', call.category ?? null);
  expectField('groupId', call.groupId ?? null);
  expectField('previousId', call.previousId ?? null);

  const expectedKey = call.anonymousId ?? call.userId ?? null;
  if (record.key !== expectedKey) problems.push(`record key is ${JSON.stringify(record.key)}, expected anonymousId ?? userId = ${JSON.stringify(expectedKey)}`);

  for (const field of ['properties', 'traits', 'integrations'] as const) {
    const arrived = parseJsonObject(value[field], field, problems);
    if (arrived === undefined) continue;
    const sent = call[field];
    if (sent === undefined) {
      // Some libraries send an empty object for a field the caller left out.
      if (!isEmpty(arrived)) problems.push(`${field} is ${value[field]}, but the call had none`);
    } else if (!isDeepStrictEqual(arrived, sent)) {
      problems.push(`${field} is ${value[field]}, expected ${JSON.stringify(sent)}`);
    }
  }

  const arrivedContext = parseJsonObject(value.context, 'context', problems);
  if (arrivedContext === null) problems.push(`context is null, expected one with library ${JSON.stringify(manifest.library)}`);
  if (arrivedContext) {
    if (!isDeepStrictEqual(arrivedContext.library, manifest.library)) {
      problems.push(`context.library is ${JSON.stringify(arrivedContext.library)}, expected ${JSON.stringify(manifest.library)}`);
    }
    for (const [key, sent] of Object.entries(call.context ?? {})) {
      if (!isDeepStrictEqual(arrivedContext[key], sent)) problems.push(`context.${key} is ${JSON.stringify(arrivedContext[key])}, expected ${JSON.stringify(sent)}`);
    }
  }
  return problems;
}

function checkTimes(call: SentCall, record: ArrivedRecord, wire: WireMessage | undefined, context: CheckContext): string[] {
  const problems: string[] = [];
  const { timestamp, originalTimestamp, sentAt, receivedAt } = record.value;
  for (const [field, ms] of Object.entries({ timestamp, originalTimestamp, sentAt, receivedAt })) {
    if (ms !== null && !Number.isSafeInteger(ms)) problems.push(`${field} is ${String(ms)}, not epoch milliseconds`);
  }
  if (receivedAt < context.startedAt - NOW_TOLERANCE_MS || receivedAt > context.finishedAt + NOW_TOLERANCE_MS) {
    problems.push(`receivedAt ${time(receivedAt)} is outside the run (${time(context.startedAt)} to ${time(context.finishedAt)})`);
  }
  if (!wire) return [...problems, 'the message is not in any request the library made that ingest accepted'];

  const sentTimestamp = typeof wire.message.timestamp === 'string' ? wire.message.timestamp : undefined;
  const clientTimestamp = sentTimestamp === undefined ? undefined : parseWireTimestamp(sentTimestamp);
  if (sentTimestamp !== undefined && clientTimestamp === undefined) problems.push(`the suite cannot read the timestamp the library sent: ${sentTimestamp}`);
  if (call.timestamp !== undefined) {
    const fixed = parseWireTimestamp(call.timestamp);
    if (fixed !== clientTimestamp) problems.push(`the library sent timestamp ${String(sentTimestamp)} for the fixed ${call.timestamp}`);
  } else if (clientTimestamp !== undefined && Math.abs(clientTimestamp - receivedAt) > context.finishedAt - context.startedAt + NOW_TOLERANCE_MS) {
    problems.push(`the library's timestamp ${sentTimestamp} is not close to receivedAt ${time(receivedAt)}`);
  }
  if (clientTimestamp !== undefined && originalTimestamp !== clientTimestamp) {
    problems.push(`originalTimestamp is ${time(originalTimestamp)}, expected ${time(clientTimestamp)} (the library sent "${sentTimestamp}")`);
  }

  const sentAtText = wire.message.sentAt ?? wire.body.sentAt;
  const clientSentAt = typeof sentAtText === 'string' ? parseWireTimestamp(sentAtText) : undefined;
  if (typeof sentAtText === 'string' && clientSentAt === undefined) problems.push(`the suite cannot read the sentAt the library sent: ${sentAtText}`);
  if (clientSentAt !== undefined && sentAt !== clientSentAt) {
    problems.push(`sentAt is ${time(sentAt)}, expected ${time(clientSentAt)} (the library sent "${String(sentAtText)}")`);
  }

  if (originalTimestamp !== null) {
    const corrected = sentAt === null ? undefined : receivedAt - sentAt + originalTimestamp;
    if (timestamp !== originalTimestamp && timestamp !== corrected) {
      problems.push(
        `timestamp is ${time(timestamp)}: neither the client's ${time(originalTimestamp)} nor that corrected for clock skew ${time(corrected)}`,
      );
    }
  } else if (timestamp < context.startedAt - NOW_TOLERANCE_MS || timestamp > context.finishedAt + NOW_TOLERANCE_MS) {
    problems.push(`timestamp ${time(timestamp)} (no client timestamp) is outside the run`);
  }
  return problems;
}

/** Every difference between what the client sent and what arrived; empty when all is well. */
export function checkDelivery(manifest: Manifest, records: ArrivedRecord[], context: CheckContext): string[] {
  const problems = checkRequests(manifest);
  const wire = wireMessages(manifest.requests);
  const byId = new Map<string, ArrivedRecord[]>();
  for (const record of records) byId.set(record.value.messageId, [...(byId.get(record.value.messageId) ?? []), record]);

  manifest.calls.forEach((call, index) => {
    const label = `${call.type} #${index + 1} (${call.messageId || 'no message id'})`;
    const arrived = byId.get(call.messageId) ?? [];
    if (arrived.length === 0) {
      problems.push(`${label}: never arrived on the ingest topic`);
      return;
    }
    if (arrived.length > 1) {
      problems.push(`${label}: arrived ${arrived.length} times (offsets ${arrived.map((record) => `${record.partition}/${record.offset}`).join(', ')})`);
    }
    const record = arrived[0]!;
    for (const problem of [...checkFields(call, record, manifest, context), ...checkTimes(call, record, wire.get(call.messageId), context)]) {
      problems.push(`${label}: ${problem}`);
    }
  });

  const sentIds = new Set(manifest.calls.map((call) => call.messageId));
  for (const record of records) {
    if (!sentIds.has(record.value.messageId)) problems.push(`unexpected record ${record.value.messageId} (${record.value.type}) at ${record.partition}/${record.offset}`);
  }
  const idsByContent = new Map<string, Set<string>>();
  for (const record of records) {
    const key = contentKey(record.value as unknown as Record<string, unknown>);
    idsByContent.set(key, (idsByContent.get(key) ?? new Set()).add(record.value.messageId));
  }
  for (const ids of idsByContent.values()) {
    if (ids.size > 1) problems.push(`one call arrived under ${ids.size} message ids: ${[...ids].join(', ')}`);
  }
  return problems;
}

/** How the library talked to ingest, for the test log: paths, headers, encodings, time formats. */
export function describeTraffic(manifest: Manifest): string {
  const lines = [`${manifest.client} (${manifest.library.name} ${manifest.library.version}): ${manifest.calls.length} calls in ${manifest.requests.length} requests`];
  manifest.requests.forEach((request, index) => {
    const batch = requestMessages(request.body).filter(isObject);
    const headers = request.headers
      ? Object.entries(request.headers)
          .sort(([a], [b]) => a.localeCompare(b))
          .map(([name, value]) => `${name}: ${value}`)
          .join('; ')
      : 'not exposed by the library';
    const single = !Array.isArray(request.body.batch);
    const topLevel = single ? [] : Object.keys(request.body).filter((key) => key !== 'batch');
    const timestamps = [...new Set(batch.map((message) => String(message.timestamp)))].slice(0, 3);
    lines.push(
      `  #${index + 1} POST ${request.path} -> ${request.status ?? (request.error ? 'failed' : 'accepted')}; ` +
        (single ? `one message, body keys ${Object.keys(request.body).join(', ')}; ` : `${batch.length} messages; body keys besides batch: ${topLevel.join(', ') || 'none'}; `) +
        `sentAt ${JSON.stringify(request.body.sentAt)}; timestamps e.g. ${timestamps.join(', ')}`,
      `     headers: ${headers}`,
    );
  });
  return lines.join('\n');
}
