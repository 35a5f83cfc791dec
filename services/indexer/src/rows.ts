/**
 * What the indexer writes for each record it reads — pure, no database: an attempt row per
 * `DeliveryAttempt`, a message row (with the router's routing decision) per `IngestMessage`,
 * and the delivery states both imply. Records that can never be written (a time no date can
 * hold, free-form JSON nesting deeper than the router takes) are refused here with an
 * `Unindexable` naming why, so they go to the quarantine instead of failing the batch forever.
 * Attempts carry no free-form JSON (a response body is kept as text), so only messages are
 * checked for depth.
 *
 * Text columns are made safe for PostgreSQL on the way: NUL characters (which text refuses)
 * and unpaired UTF-16 surrogates become U+FFFD. JSON documents (the message, its routing, an
 * attempt's targets) are stored in json columns exactly as JSON.stringify writes them, escapes
 * and all.
 */
import { type DeliveryAttempt, type Destination, type IngestMessage, type Source } from '@tributary/schemas';
import { contextIntegrations, decideRoute, isDateMs, MAX_JSON_DEPTH, webhooksEnabled, type QuarantineReason } from '@tributary/shared';
import { isJsonObject, tooDeepFields, type JsonObject } from '@tributary/shared/segment';

export class Unindexable extends Error {
  constructor(
    readonly reason: QuarantineReason,
    message: string,
  ) {
    super(message);
    this.name = 'Unindexable';
  }
}

/** A target as the read API shows it (responseBody as text). */
export interface TargetJson {
  urlIndex: number;
  origin: string;
  outcome: string;
  status: number | null;
  errorClass: string | null;
  error: string | null;
  durationMs: number;
  responseBody: string | null;
  retryAfterMs: number | null;
}

export interface AttemptRow {
  partition: number;
  offset: number;
  deliveryId: string;
  messageId: string;
  sourceId: string;
  destinationId: string;
  messageType: string;
  userId: string | null;
  anonymousId: string | null;
  kind: string;
  attempt: number;
  outcome: string;
  lane: string;
  startedAt: number;
  durationMs: number;
  status: number | null;
  error: string | null;
  deferReason: string | null;
  deadReason: string | null;
  nextAttemptAt: number | null;
  tier: string | null;
  receivedAt: number;
  replays: number;
  targets: TargetJson[];
}

export type RoutingDecision = 'routed' | 'filtered';

export interface RoutingEntry {
  sourceId: string;
  destinationId: string | null;
  decision: RoutingDecision;
  reason: string | null;
}

export interface MessageRow {
  sourceId: string;
  messageId: string;
  type: string;
  userId: string | null;
  anonymousId: string | null;
  event: string | null;
  receivedAt: number;
  timestamp: number;
  message: JsonObject;
  routing: RoutingEntry[];
  partition: number;
  offset: number;
}

export type DeliveryState = 'pending' | 'delivered' | 'retrying' | 'deferred' | 'dead';

/** A delivery's state as of its latest record (or `pending`, from the message alone). */
export interface DeliveryRow {
  sourceId: string;
  deliveryId: string;
  messageId: string;
  destinationId: string;
  userId: string | null;
  receivedAt: number;
  state: DeliveryState;
  attempts: number;
  firstAttemptAt: number | null;
  lastAttemptAt: number | null;
  nextAttemptAt: number | null;
  lastStatus: number | null;
  lastError: string | null;
  deliveredAt: number | null;
  latencyMs: number | null;
  /** Event time of the state: the record's start, or the message's receipt for `pending`. */
  updatedAt: number;
  /** Position of the record the state comes from (null for `pending`). */
  lastPartition: number | null;
  lastOffset: number | null;
}

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

/** Text PostgreSQL accepts in text and jsonb columns. */
export function safeText(text: string): string {
  // Tested first: nearly every string is clean, and replace() would copy it.
  if (!/[\u0000\uD800-\uDFFF]/.test(text)) return text;
  return text.replace(/\u0000/g, '\uFFFD').replace(LONE_SURROGATE, '\uFFFD');
}

function safeNullable(text: string | null | undefined): string | null {
  return text === null || text === undefined ? null : safeText(text);
}

function checkTime(field: string, value: number | null, required: boolean): void {
  if (value === null && !required) return;
  if (!isDateMs(value)) {
    throw new Unindexable('invalid_timestamp', `${field} is not a valid time: ${String(value)}`);
  }
}

function requireText(field: string, value: string): void {
  if (typeof value !== 'string' || value === '') throw new Unindexable('missing_field', `${field} is missing`);
}

export function attemptRow(record: DeliveryAttempt, partition: number, offset: number): AttemptRow {
  for (const field of ['deliveryId', 'messageId', 'sourceId', 'destinationId'] as const) requireText(field, record[field]);
  checkTime('startedAt', record.startedAt, true);
  checkTime('receivedAt', record.receivedAt, true);
  checkTime('nextAttemptAt', record.nextAttemptAt, false);
  return {
    partition,
    offset,
    deliveryId: safeText(record.deliveryId),
    messageId: safeText(record.messageId),
    sourceId: safeText(record.sourceId),
    destinationId: safeText(record.destinationId),
    messageType: safeText(record.messageType),
    userId: safeNullable(record.userId),
    anonymousId: safeNullable(record.anonymousId),
    kind: safeText(record.kind),
    attempt: record.attempt,
    outcome: safeText(record.outcome),
    lane: safeText(record.lane),
    startedAt: record.startedAt,
    durationMs: record.durationMs,
    status: record.status,
    error: safeNullable(record.error),
    deferReason: safeNullable(record.deferReason),
    deadReason: safeNullable(record.deadReason),
    nextAttemptAt: record.nextAttemptAt,
    tier: safeNullable(record.tier),
    receivedAt: record.receivedAt,
    replays: record.replays,
    targets: record.targets.map((target) => ({
      urlIndex: target.urlIndex,
      origin: safeText(target.origin),
      outcome: safeText(target.outcome),
      status: target.status,
      errorClass: safeNullable(target.errorClass),
      error: safeNullable(target.error),
      durationMs: target.durationMs,
      // Bytes as text: invalid UTF-8 becomes U+FFFD (what toString does), then made safe.
      responseBody: target.responseBody === null ? null : safeText(Buffer.from(target.responseBody).toString('utf8')),
      retryAfterMs: target.retryAfterMs,
    })),
  };
}

const STATE_OF_OUTCOME: Record<string, DeliveryState> = { delivered: 'delivered', retry: 'retrying', deferred: 'deferred', dead: 'dead' };

export function deliveryStateOf(outcome: string): DeliveryState {
  return STATE_OF_OUTCOME[outcome] ?? 'retrying';
}

const stateKey = (sourceId: string, deliveryId: string) => `${sourceId}\u0000${deliveryId}`;

/**
 * One state per delivery from a run of attempt rows (one partition's, in offset order):
 * PostgreSQL's upsert may touch a row once per statement, so a delivery attempted several
 * times within one batch is folded here first — the last record's state, the earliest
 * attempt's start, the delivering attempt's end.
 */
export function foldDeliveryStates(rows: readonly AttemptRow[]): DeliveryRow[] {
  const states = new Map<string, DeliveryRow>();
  for (const row of rows) {
    const key = stateKey(row.sourceId, row.deliveryId);
    const previous = states.get(key);
    const requested = row.kind === 'attempt';
    const delivered = row.outcome === 'delivered';
    const end = row.startedAt + row.durationMs;
    const next: DeliveryRow = {
      sourceId: row.sourceId,
      deliveryId: row.deliveryId,
      messageId: row.messageId,
      destinationId: row.destinationId,
      userId: row.userId,
      receivedAt: row.receivedAt,
      state: deliveryStateOf(row.outcome),
      attempts: row.attempt,
      firstAttemptAt: minNullable(previous?.firstAttemptAt ?? null, requested ? row.startedAt : null),
      lastAttemptAt: maxNullable(previous?.lastAttemptAt ?? null, requested ? row.startedAt : null),
      nextAttemptAt: row.nextAttemptAt,
      lastStatus: row.status,
      lastError: row.error,
      deliveredAt: delivered ? end : (previous?.deliveredAt ?? null),
      latencyMs: delivered ? end - row.receivedAt : (previous?.latencyMs ?? null),
      updatedAt: row.startedAt,
      lastPartition: row.partition,
      lastOffset: row.offset,
    };
    // Offsets order the records of a delivery; a batch is one partition's, in order.
    if (previous && previous.lastPartition === row.partition && previous.lastOffset! > row.offset) continue;
    states.set(key, next);
  }
  return sortDeliveries([...states.values()]);
}

/** By key, so concurrent writers lock delivery rows in one order and cannot deadlock. */
export function sortDeliveries(rows: DeliveryRow[]): DeliveryRow[] {
  return rows.sort((a, b) => (a.sourceId === b.sourceId ? compare(a.deliveryId, b.deliveryId) : compare(a.sourceId, b.sourceId)));
}

const compare = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

function minNullable(a: number | null, b: number | null): number | null {
  if (a === null) return b;
  if (b === null) return a;
  return Math.min(a, b);
}

function maxNullable(a: number | null, b: number | null): number | null {
  if (a === null) return b;
  if (b === null) return a;
  return Math.max(a, b);
}

/** The part of the live configuration routing reads (ConfigView provides it). */
export interface RoutingConfig {
  source(id: string): Source | undefined;
  destinationsForSource(sourceId: string): readonly Destination[];
}

/** A free-form part parsed, or — when a producer wrote text that is not a JSON object — kept as the text. */
function parseFreeForm(text: string | null): { value: unknown; object: JsonObject | null } {
  if (text === null) return { value: undefined, object: null };
  try {
    const parsed: unknown = JSON.parse(text);
    return { value: parsed, object: isJsonObject(parsed) ? parsed : null };
  } catch {
    return { value: text, object: null };
  }
}

const iso = (ms: number) => new Date(ms).toISOString();

export function messageRow(message: IngestMessage, partition: number, offset: number, config: RoutingConfig): { message: MessageRow } {
  requireText('messageId', message.messageId);
  requireText('sourceId', message.sourceId);
  checkTime('timestamp', message.timestamp, true);
  checkTime('receivedAt', message.receivedAt, true);
  checkTime('sentAt', message.sentAt, false);
  checkTime('originalTimestamp', message.originalTimestamp, false);
  // Checked by a scan before parsing, with the router's rule: JSON.parse takes thousands of
  // levels, but JSON.stringify (writing the row) and rendering recurse and overflow the stack
  // — an error no retry cures, which stopped the partition for good.
  const deep = tooDeepFields(message);
  if (deep.length > 0) throw new Unindexable('too_deep', `${deep.join(', ')} ${deep.length > 1 ? 'nest' : 'nests'} objects and arrays more than ${MAX_JSON_DEPTH} levels deep`);

  const context = parseFreeForm(message.context);
  const integrations = parseFreeForm(message.integrations);
  // The router's own decision, with the config as it stands now.
  const decision = decideRoute(config.source(message.sourceId), config.destinationsForSource(message.sourceId), () =>
    webhooksEnabled(integrations.object, contextIntegrations(context.object ?? {})),
  );
  const routing: RoutingEntry[] = [
    ...decision.destinations.map((destination): RoutingEntry => ({ sourceId: message.sourceId, destinationId: destination.id, decision: 'routed', reason: null })),
    ...decision.filtered.map((filtered): RoutingEntry => ({ sourceId: message.sourceId, destinationId: filtered.destinationId ?? null, decision: 'filtered', reason: filtered.reason })),
  ];

  const json: JsonObject = { messageId: message.messageId, type: message.type, sourceId: message.sourceId };
  const put = (key: string, value: unknown) => {
    if (value !== null && value !== undefined) json[key] = value;
  };
  put('userId', message.userId);
  put('anonymousId', message.anonymousId);
  put('event', message.event);
  put('name', message.name);
  put('category', message.category);
  put('groupId', message.groupId);
  put('previousId', message.previousId);
  put('properties', parseFreeForm(message.properties).value);
  put('traits', parseFreeForm(message.traits).value);
  put('context', context.value);
  put('integrations', integrations.value);
  json.timestamp = iso(message.timestamp);
  put('originalTimestamp', message.originalTimestamp === null ? null : iso(message.originalTimestamp));
  put('sentAt', message.sentAt === null ? null : iso(message.sentAt));
  json.receivedAt = iso(message.receivedAt);

  const sourceId = safeText(message.sourceId);
  const messageId = safeText(message.messageId);
  const userId = safeNullable(message.userId);
  return {
    message: {
      sourceId,
      messageId,
      type: message.type,
      userId,
      anonymousId: safeNullable(message.anonymousId),
      event: safeNullable(message.event),
      receivedAt: message.receivedAt,
      timestamp: message.timestamp,
      message: json,
      routing,
      partition,
      offset,
    },
  };
}
