/**
 * The topic contract: topic names, their Avro value schemas (the `.avsc` files in
 * `schemas/avro/`) and the TypeScript shapes the services read and write.
 *
 * Producers that bypass the HTTP API write `IngestMessage` records to `TOPICS.ingest`,
 * registered under the subject `tributary.ingest.v1-value` (topic-name strategy).
 */
import { readFileSync } from 'node:fs';

export const TOPICS = {
  ingest: 'tributary.ingest.v1',
  config: 'tributary.config.v1',
  deliveries: 'tributary.deliveries.v1',
  deadLetters: 'tributary.deliveries.dlq.v1',
  audiences: 'tributary.audiences.v1',
} as const;

/** One topic per distinct retry delay, so every partition of a tier is in due order. */
export function retryTopic(tier: string): string {
  if (!/^[0-9a-z]+$/.test(tier)) throw new Error(`invalid retry tier label: ${tier}`);
  return `tributary.retry.${tier}.v1`;
}

export const RETRY_TOPIC_PATTERN = /^tributary\.retry\.([0-9a-z]+)\.v1$/;

export type SchemaName = 'ingest' | 'config' | 'delivery' | 'retry' | 'dlq' | 'audiences';

/** A raw Avro record schema as parsed from its `.avsc` file. */
export interface RawRecordSchema {
  type: 'record';
  name: string;
  namespace?: string;
  doc?: string;
  fields: Array<{ name: string; type: unknown; default?: unknown; doc?: string }>;
}

const cache = new Map<SchemaName, RawRecordSchema>();

export function loadSchema(name: SchemaName): RawRecordSchema {
  let schema = cache.get(name);
  if (!schema) {
    schema = JSON.parse(readFileSync(new URL(`../avro/${name}.avsc`, import.meta.url), 'utf8')) as RawRecordSchema;
    cache.set(name, schema);
  }
  return schema;
}

/** Which schema each fixed topic's values use. Retry tier topics all use `retry`. */
export const TOPIC_SCHEMAS: Record<Exclude<keyof typeof TOPICS, never>, SchemaName> = {
  ingest: 'ingest',
  config: 'config',
  deliveries: 'delivery',
  deadLetters: 'dlq',
  audiences: 'audiences',
};

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
  | 'redirect'
  | 'tls'
  | 'blocked_address'
  | 'invalid_url'
  | 'destination_disabled'
  | 'destination_deleted'
  | 'undeliverable';

/** Value of tributary.deliveries.dlq.v1. */
export interface DeadLetter {
  delivery: Delivery;
  reason: DeadLetterReason | string;
  status: number | null;
  error: string;
  deadAt: number;
}

/** Value of tributary.audiences.v1 (compacted; key `<audience>/<userId>`). */
export interface AudienceMembership {
  audience: string;
  userId: string;
  sourceId: string;
  member: boolean;
  updatedAt: number;
}

export function deliveryKey(destinationId: string, messageId: string): string {
  return `${destinationId}/${messageId}`;
}
