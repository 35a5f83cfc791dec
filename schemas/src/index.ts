/**
 * The topic contract: topic names, their Avro value schemas (the `.avsc` files in
 * `schemas/avro/`) and the TypeScript shapes the services read and write.
 *
 * Producers that bypass the HTTP API write `IngestMessage` records to `TOPICS.ingest`,
 * registered under the subject `tributary.ingest.v1-value` (topic-name strategy).
 */
import { readFileSync } from 'node:fs';
import avro from 'avsc';
import { recordUnionHook } from './avro-record-union.js';

/**
 * Topic names of one Tributary deployment. The namespace (default `tributary`, setting
 * TOPIC_NAMESPACE) prefixes every topic and consumer group, so several pipelines — or
 * several test runs — can share one Kafka cluster without seeing each other.
 */
export interface TopicNames {
  namespace: string;
  ingest: string;
  /**
   * The overflow lane of ingest: what a source sends beyond its share of the main ingest
   * topic (INGEST_SOURCE_RATE). The router reads it with a consumer of its own and gives
   * the main topic's chunks the next transaction, so one source's burst queues here, not in
   * front of every other source. Written by ingest only; producers write to `ingest`.
   */
  ingestOverflow: string;
  config: string;
  deliveries: string;
  /**
   * The retry lane: due retries released by the retry-scheduler, dead letters replayed, and
   * the router's new deliveries to a destination whose circuit is open at every dispatcher.
   * Kept apart from `deliveries` (first attempts) so a flood of either never queues in
   * front of the other; the dispatcher reads both with separate buffers.
   */
  dueRetries: string;
  deadLetters: string;
  audiences: string;
  /** Records a service could not handle, with the reason (key `<topic>/<partition>/<offset>`). */
  quarantine: string;
  /** One record per attempt, deferral or pre-attempt end of a delivery: the delivery log. */
  attempts: string;
  /** Each dispatcher instance's circuit state and backlog per destination (compacted). */
  destinationHealth: string;
  /** Deduplication state of the router: one record per routing transaction, time-limited. */
  dedup: string;
  /** Which dead letters were replayed (key `<dlq partition>/<dlq offset>`). */
  deadLetterReplays: string;
  /** One topic per distinct retry delay, so every partition of a tier is in due order. */
  retry(tier: string): string;
  /** The tier label of a retry topic name, or undefined when it is not one. */
  retryTier(topic: string): string | undefined;
}

const NAMESPACE = /^[a-z0-9][a-z0-9_-]{0,62}$/;

export function topicNames(namespace = 'tributary'): TopicNames {
  if (!NAMESPACE.test(namespace)) {
    throw new Error(`invalid topic namespace "${namespace}": use 1-63 lower-case letters, digits, "_" or "-"`);
  }
  const retryPattern = new RegExp(`^${namespace}\\.retry\\.([0-9a-z]+)\\.v1$`);
  return {
    namespace,
    ingest: `${namespace}.ingest.v1`,
    ingestOverflow: `${namespace}.ingest.overflow.v1`,
    config: `${namespace}.config.v1`,
    deliveries: `${namespace}.deliveries.v1`,
    dueRetries: `${namespace}.deliveries.retries.v1`,
    deadLetters: `${namespace}.deliveries.dlq.v1`,
    audiences: `${namespace}.audiences.v1`,
    quarantine: `${namespace}.quarantine.v1`,
    attempts: `${namespace}.attempts.v1`,
    destinationHealth: `${namespace}.destination-health.v1`,
    dedup: `${namespace}.dedup.v2`,
    deadLetterReplays: `${namespace}.dlq-replays.v1`,
    retry(tier) {
      if (!/^[0-9a-z]+$/.test(tier)) throw new Error(`invalid retry tier label: ${tier}`);
      return `${namespace}.retry.${tier}.v1`;
    },
    retryTier(topic) {
      return retryPattern.exec(topic)?.[1];
    },
  };
}

/** The default deployment's topics — the contract documented in the README. */
export const TOPICS = topicNames();

export type SchemaName =
  | 'ingest'
  | 'config'
  | 'delivery'
  | 'retry'
  | 'dlq'
  | 'dlq-replay'
  | 'audiences'
  | 'dedup'
  | 'quarantine'
  | 'attempt'
  | 'destination-health';

export const SCHEMA_NAMES: readonly SchemaName[] = [
  'ingest',
  'config',
  'delivery',
  'retry',
  'dlq',
  'dlq-replay',
  'audiences',
  'dedup',
  'quarantine',
  'attempt',
  'destination-health',
];

/** A raw Avro record schema as parsed from its `.avsc` file. */
export interface RawRecordSchema {
  type: 'record';
  name: string;
  namespace?: string;
  doc?: string;
  fields: Array<{ name: string; type: unknown; default?: unknown; doc?: string }>;
}

const cache = new Map<SchemaName, RawRecordSchema>();

/**
 * The avsc type of one of our schemas, as JavaScript producers and consumers should build
 * it: unions of several records (the config entity) read and write as plain objects.
 */
export function avroType(name: SchemaName): avro.Type {
  return avro.Type.forSchema(loadSchema(name) as unknown as avro.Schema, { typeHook: recordUnionHook });
}

export { recordUnionHook };

export function loadSchema(name: SchemaName): RawRecordSchema {
  let schema = cache.get(name);
  if (!schema) {
    schema = JSON.parse(readFileSync(new URL(`../avro/${name}.avsc`, import.meta.url), 'utf8')) as RawRecordSchema;
    cache.set(name, schema);
  }
  return schema;
}

export type MessageType = 'identify' | 'track' | 'page' | 'screen' | 'group' | 'alias' | 'delete';

export const MESSAGE_TYPES: readonly MessageType[] = ['identify', 'track', 'page', 'screen', 'group', 'alias', 'delete'];

/** Value of tributary.ingest.v1. Times are epoch milliseconds (UTC). */
export interface IngestMessage {
  messageId: string;
  type: MessageType;
  sourceId: string;
  userId: string | null;
  anonymousId: string | null;
  timestamp: number;
  originalTimestamp: number | null;
  sentAt: number | null;
  receivedAt: number;
  event: string | null;
  name: string | null;
  category: string | null;
  groupId: string | null;
  previousId: string | null;
  /** JSON object text. */
  properties: string | null;
  /** JSON object text. */
  traits: string | null;
  /** JSON object text. */
  context: string | null;
  /** JSON object text. */
  integrations: string | null;
}

export interface WebhookEntry {
  url: string;
  headers: Record<string, string>;
}

export interface WebhooksSettings {
  sharedSecret: string | null;
  standardWebhooksSecret: string | null;
  webhooks: WebhookEntry[];
}

export interface Source {
  id: string;
  name: string;
  writeKey: string;
  enabled: boolean;
}

export interface Destination {
  id: string;
  name: string;
  type: string;
  sources: string[];
  enabled: boolean;
  settings: WebhooksSettings;
}

/** Value of tributary.config.v1 (null value = deleted). */
export interface ConfigEntry {
  entity: Source | Destination;
  updatedAt: number;
}

/** Value of tributary.deliveries.v1. */
export interface Delivery {
  deliveryId: string;
  destinationId: string;
  sourceId: string;
  messageId: string;
  messageType: string;
  /** The message's userId and anonymousId (null in records written before they were added). */
  userId: string | null;
  anonymousId: string | null;
  body: Buffer;
  receivedAt: number;
  routedAt: number;
  attempts: number;
  firstAttemptAt: number | null;
  lastError: string | null;
  lastStatus: number | null;
  replays: number;
}

/** Value of tributary.retry.<tier>.v1. */
export interface RetryRecord {
  delivery: Delivery;
  dueAt: number;
  tier: string;
}

export type DeadLetterReason =
  | 'expired'
  | 'http_status'
  /** 410 Gone from every URL: the receiver says this endpoint will not come back. */
  | 'gone'
  | 'redirect'
  | 'tls'
  | 'blocked_address'
  | 'invalid_url'
  | 'destination_disabled'
  | 'destination_deleted'
  | 'undeliverable'
  /** The outcome record would exceed the broker's record size limit. */
  | 'too_large';

/** Value of tributary.deliveries.dlq.v1. */
export interface DeadLetter {
  delivery: Delivery;
  reason: DeadLetterReason | string;
  status: number | null;
  error: string;
  deadAt: number;
}

/** Value of the dead-letter replay markers (`<namespace>.dlq-replays.v1`, key `<dlq partition>/<dlq offset>`). */
export interface DeadLetterReplay {
  deliveryId: string;
  destinationId: string;
  replayedAt: number;
}

/** Value of tributary.audiences.v1 (compacted; key `<audience>/<userId>`). */
export interface AudienceMembership {
  audience: string;
  userId: string;
  sourceId: string;
  member: boolean;
  updatedAt: number;
  /** A computed trait's value as JSON text; null for a plain audience (the trait is then true). */
  value: string | null;
}

/** Value of the router's dedup topic: the ids one routing transaction forwarded. */
export interface DedupBatch {
  firstSeenAt: number;
  /** `<sourceId>/<messageId>` of each message forwarded. */
  keys: string[];
}

/** Value of `<namespace>.quarantine.v1` (key `<sourceTopic>/<partition>/<offset>`). */
export interface QuarantinedRecord {
  service: string;
  sourceTopic: string;
  partition: number;
  offset: number;
  /** Machine-readable: not_framed, unknown_schema, undecodable, invalid, too_deep, too_large, unrenderable, unwritable… */
  reason: string;
  error: string;
  key: Buffer | null;
  /** The original value, cut to a bounded size (`valueSize` is the original's). */
  value: Buffer | null;
  valueSize: number;
  recordTimestamp: number;
  quarantinedAt: number;
}

/** One URL's part of an attempt. */
export interface AttemptTarget {
  urlIndex: number;
  /** Scheme, host and port only. */
  origin: string;
  outcome: 'success' | 'http_error' | 'timeout' | 'connection_error' | 'tls_error' | 'refused' | string;
  status: number | null;
  errorClass: string | null;
  error: string | null;
  durationMs: number;
  /** First bytes of the response body (≤ 1 KiB). */
  responseBody: Buffer | null;
  retryAfterMs: number | null;
}

export type AttemptKind = 'attempt' | 'deferred' | 'preflight';
export type AttemptOutcome = 'delivered' | 'retry' | 'dead' | 'deferred';
export type DeliveryLane = 'first' | 'retry';

/** Value of `<namespace>.attempts.v1` (key: deliveryId). */
export interface DeliveryAttempt {
  deliveryId: string;
  messageId: string;
  sourceId: string;
  destinationId: string;
  messageType: string;
  userId: string | null;
  anonymousId: string | null;
  kind: AttemptKind | string;
  attempt: number;
  outcome: AttemptOutcome | string;
  lane: DeliveryLane | string;
  startedAt: number;
  durationMs: number;
  status: number | null;
  error: string | null;
  deferReason: 'circuit_open' | 'backlog_full' | string | null;
  deadReason: string | null;
  nextAttemptAt: number | null;
  tier: string | null;
  receivedAt: number;
  replays: number;
  targets: AttemptTarget[];
}

export type CircuitState = 'closed' | 'open' | 'half_open';

/** Value of `<namespace>.destination-health.v1` (compacted; key `<destinationId>/<instanceId>`). */
export interface DestinationHealth {
  destinationId: string;
  instanceId: string;
  state: CircuitState | string;
  stateSince: number;
  openUntil: number | null;
  openings: number;
  consecutiveFailures: number;
  windowRequests: number;
  windowFailures: number;
  lastSuccessAt: number | null;
  lastFailureAt: number | null;
  lastError: string | null;
  queuedFirst: number;
  queuedRetries: number;
  inFlight: number;
  /** Since when the destination has not kept up (attempts stalled, or every request slot taken with deliveries waiting); null otherwise. */
  congestedSince: number | null;
  attempts: number;
  deferrals: number;
  updatedAt: number;
}

export function quarantineKey(topic: string, partition: number, offset: string | number | bigint): string {
  return `${topic}/${partition}/${offset}`;
}

export function destinationHealthKey(destinationId: string, instanceId: string): string {
  return `${destinationId}/${instanceId}`;
}

/**
 * A delivery's id (and record key): one message of one source to one destination. The source
 * is part of it because messageIds are unique per source only — two sources may send the same
 * one, and a destination connected to both must see two deliveries (receivers drop repeats by
 * it: Standard Webhooks' `webhook-id`). Records written before it carried the source keep
 * their `<destinationId>/<messageId>`; the id is opaque everywhere it is read.
 */
export function deliveryKey(destinationId: string, sourceId: string, messageId: string): string {
  return `${destinationId}/${sourceId}/${messageId}`;
}
