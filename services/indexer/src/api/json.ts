/**
 * Rows as the read API shows them (the contract's JSON): camelCase, times as ISO-8601 UTC
 * strings with milliseconds, an attempt's id as `<partition>-<offset>`. Pure.
 */
import { deliveryKey } from '@tributary/schemas';
import { foldDeliveryStates, type AttemptRow, type DeliveryRow, type RoutingEntry, type TargetJson } from '../rows.js';

export interface AttemptDbRow {
  kafka_partition: number;
  kafka_offset: number;
  delivery_id: string;
  message_id: string;
  source_id: string;
  destination_id: string;
  message_type: string;
  user_id: string | null;
  anonymous_id: string | null;
  kind: string;
  attempt: number;
  outcome: string;
  lane: string;
  started_at: number;
  duration_ms: number;
  status: number | null;
  error: string | null;
  defer_reason: string | null;
  dead_reason: string | null;
  next_attempt_at: number | null;
  tier: string | null;
  received_at: number;
  replays: number;
  targets: TargetJson[];
}

export interface MessageDbRow {
  seq: number;
  source_id: string;
  message_id: string;
  type: string;
  user_id: string | null;
  anonymous_id: string | null;
  event: string | null;
  received_at: number;
  event_timestamp: number;
  message: Record<string, unknown>;
  routing: RoutingEntry[];
}

export interface DeliveryDbRow {
  source_id: string;
  delivery_id: string;
  message_id: string;
  destination_id: string;
  state: string;
  attempts: number;
  first_attempt_at: number | null;
  last_attempt_at: number | null;
  next_attempt_at: number | null;
  last_status: number | null;
  last_error: string | null;
  delivered_at: number | null;
  latency_ms: number | null;
}

export interface SummaryDbRow {
  destination_id: string;
  attempts: number;
  delivered: number;
  failed: number;
  deferred: number;
  dead_letters: number;
  delivery_p50: number | null;
  delivery_p95: number | null;
  attempt_p50: number | null;
  attempt_p95: number | null;
}

export interface TimelineDbRow {
  bucket: number;
  attempts: number;
  delivered: number;
  failed: number;
  deferred: number;
  delivery_p50: number | null;
  delivery_p95: number | null;
}

export const isoTime = (ms: number): string => new Date(ms).toISOString();
const isoOrNull = (ms: number | null): string | null => (ms === null ? null : isoTime(ms));
/** Percentiles interpolate; whole milliseconds are what a reader wants. */
const wholeMs = (value: number | null): number | null => (value === null ? null : Math.round(value));

export function attemptJson(row: AttemptDbRow) {
  return {
    id: `${row.kafka_partition}-${row.kafka_offset}`,
    deliveryId: row.delivery_id,
    messageId: row.message_id,
    sourceId: row.source_id,
    destinationId: row.destination_id,
    messageType: row.message_type,
    userId: row.user_id,
    anonymousId: row.anonymous_id,
    kind: row.kind,
    attempt: row.attempt,
    outcome: row.outcome,
    lane: row.lane,
    startedAt: isoTime(row.started_at),
    durationMs: row.duration_ms,
    status: row.status,
    error: row.error,
    deferReason: row.defer_reason,
    deadReason: row.dead_reason,
    nextAttemptAt: isoOrNull(row.next_attempt_at),
    tier: row.tier,
    receivedAt: isoTime(row.received_at),
    replays: row.replays,
    targets: row.targets,
  };
}

/** An entry of `messages` in the message answer. */
export function messageDetailJson(row: MessageDbRow) {
  return {
    sourceId: row.source_id,
    type: row.type,
    userId: row.user_id,
    anonymousId: row.anonymous_id,
    event: row.event,
    receivedAt: isoTime(row.received_at),
    timestamp: isoTime(row.event_timestamp),
    message: row.message,
  };
}

/** An entry of the live tail. */
export function tailMessageJson(row: MessageDbRow) {
  return {
    sourceId: row.source_id,
    messageId: row.message_id,
    type: row.type,
    userId: row.user_id,
    anonymousId: row.anonymous_id,
    event: row.event,
    receivedAt: isoTime(row.received_at),
    message: row.message,
  };
}

/**
 * The deliveries of a message, from its attempts (folded as the indexer folds them on the way
 * in) and — `pending` — the destinations its routing sent it to that no attempt has been seen
 * for yet. Derived here rather than written per message: the deliveries table holds only what
 * did not succeed at its first attempt, and a row per event is saved on the hot path.
 */
export function deliveriesOf(messages: readonly MessageDbRow[], attempts: readonly AttemptDbRow[]): DeliveryDbRow[] {
  const folded = foldDeliveryStates(attempts.map(attemptRowOf)).map(deliveryDbRowOf);
  // By source, destination and message rather than delivery id: attempts written before the id
  // carried the source (`<destination>/<message>`) still count as seen.
  const seenKey = (sourceId: string, destinationId: string, messageId: string) => `${sourceId}\u0000${destinationId}\u0000${messageId}`;
  const seen = new Set(folded.map((row) => seenKey(row.source_id, row.destination_id, row.message_id)));
  const pending: DeliveryDbRow[] = [];
  for (const message of messages) {
    for (const entry of message.routing) {
      if (entry.decision !== 'routed' || entry.destinationId === null) continue;
      const deliveryId = deliveryKey(entry.destinationId, message.source_id, message.message_id);
      if (seen.has(seenKey(message.source_id, entry.destinationId, message.message_id))) continue;
      pending.push({
        source_id: message.source_id,
        delivery_id: deliveryId,
        message_id: message.message_id,
        destination_id: entry.destinationId,
        state: 'pending',
        attempts: 0,
        first_attempt_at: null,
        last_attempt_at: null,
        next_attempt_at: null,
        last_status: null,
        last_error: null,
        delivered_at: null,
        latency_ms: null,
      });
    }
  }
  const compare = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
  return [...folded, ...pending].sort((a, b) => compare(a.source_id, b.source_id) || compare(a.destination_id, b.destination_id));
}

function attemptRowOf(row: AttemptDbRow): AttemptRow {
  return {
    partition: row.kafka_partition,
    offset: row.kafka_offset,
    deliveryId: row.delivery_id,
    messageId: row.message_id,
    sourceId: row.source_id,
    destinationId: row.destination_id,
    messageType: row.message_type,
    userId: row.user_id,
    anonymousId: row.anonymous_id,
    kind: row.kind,
    attempt: row.attempt,
    outcome: row.outcome,
    lane: row.lane,
    startedAt: row.started_at,
    durationMs: row.duration_ms,
    status: row.status,
    error: row.error,
    deferReason: row.defer_reason,
    deadReason: row.dead_reason,
    nextAttemptAt: row.next_attempt_at,
    tier: row.tier,
    receivedAt: row.received_at,
    replays: row.replays,
    targets: row.targets,
  };
}

function deliveryDbRowOf(row: DeliveryRow): DeliveryDbRow {
  return {
    source_id: row.sourceId,
    delivery_id: row.deliveryId,
    message_id: row.messageId,
    destination_id: row.destinationId,
    state: row.state,
    attempts: row.attempts,
    first_attempt_at: row.firstAttemptAt,
    last_attempt_at: row.lastAttemptAt,
    next_attempt_at: row.nextAttemptAt,
    last_status: row.lastStatus,
    last_error: row.lastError,
    delivered_at: row.deliveredAt,
    latency_ms: row.latencyMs,
  };
}

export function deliveryJson(row: DeliveryDbRow) {
  return {
    deliveryId: row.delivery_id,
    sourceId: row.source_id,
    destinationId: row.destination_id,
    state: row.state,
    attempts: row.attempts,
    firstAttemptAt: isoOrNull(row.first_attempt_at),
    lastAttemptAt: isoOrNull(row.last_attempt_at),
    nextAttemptAt: isoOrNull(row.next_attempt_at),
    lastStatus: row.last_status,
    lastError: row.last_error,
    deliveredAt: isoOrNull(row.delivered_at),
    latencyMs: row.latency_ms,
  };
}

export function summaryJson(destinationId: string, range: { since: number; until: number }, row: SummaryDbRow | undefined, waiting: number) {
  const attempts = row?.attempts ?? 0;
  const delivered = row?.delivered ?? 0;
  return {
    destinationId,
    since: isoTime(range.since),
    until: isoTime(range.until),
    attempts,
    delivered,
    failed: row?.failed ?? 0,
    deferred: row?.deferred ?? 0,
    deadLetters: row?.dead_letters ?? 0,
    successRate: attempts === 0 ? null : Math.round((delivered / attempts) * 1000) / 1000,
    latency: {
      deliveryP50Ms: wholeMs(row?.delivery_p50 ?? null),
      deliveryP95Ms: wholeMs(row?.delivery_p95 ?? null),
      attemptP50Ms: wholeMs(row?.attempt_p50 ?? null),
      attemptP95Ms: wholeMs(row?.attempt_p95 ?? null),
    },
    retriesPending: waiting,
    // Ingest knows the circuit state (the dispatchers publish it) and fills this in.
    circuit: null,
  };
}

/** Every bucket from `origin`, the empty ones as zeros. */
export function timelineJson(destinationId: string, query: { origin: number; bucketMs: number; buckets: number }, rows: readonly TimelineDbRow[]) {
  const byBucket = new Map(rows.map((row) => [row.bucket, row]));
  const buckets = [];
  for (let index = 0; index < query.buckets; index++) {
    const row = byBucket.get(index);
    buckets.push({
      at: isoTime(query.origin + index * query.bucketMs),
      attempts: row?.attempts ?? 0,
      delivered: row?.delivered ?? 0,
      failed: row?.failed ?? 0,
      deferred: row?.deferred ?? 0,
      deliveryP50Ms: wholeMs(row?.delivery_p50 ?? null),
      deliveryP95Ms: wholeMs(row?.delivery_p95 ?? null),
    });
  }
  return { destinationId, bucketMs: query.bucketMs, buckets };
}
