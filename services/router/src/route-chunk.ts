/**
 * Routes a chunk of ingest records — the records one Kafka transaction covers — into
 * delivery records, without touching Kafka: decoding happens before, producing and
 * committing after (pipeline.ts). Per message: check it, decide its destinations, drop
 * it if its id was already forwarded within the dedup window, render the body once and
 * make one delivery per destination (the bytes are the same for all of them).
 */
import { deliveryKey, type Delivery, type Destination, type IngestMessage, type Source } from '@tributary/schemas';
import { dedupKey, type DedupClaims } from './dedup.js';
import { checkMessage, InvalidMessage, parseFreeForm, type FreeForm } from './message.js';
import type { ShareCharge } from './main-lane-share.js';
import { renderBody } from './render.js';
import { contextIntegrations, decideRoute, enabledDestinations, webhooksEnabled, type FilterReason } from '@tributary/shared';

/** The record as read from Kafka, for the quarantine should it turn out invalid. */
export interface RawRecord {
  key: Buffer | null;
  value: Buffer | null;
  timestamp: string;
}

/**
 * `diverted`: past its source's share of the main lane, copied to the overflow lane instead of
 * routed; `charged`: what routing it here took of that share (main-lane-share.ts).
 */
export type DecodedRecord =
  | { offset: string; raw: RawRecord; message: IngestMessage; diverted?: boolean; charged?: ShareCharge | undefined }
  | { offset: string; raw: RawRecord; invalid: InvalidMessage };

/**
 * Bytes of a rendered body: with its routing fields, the delivery record must fit the
 * broker's record limit (1 MB by default), or the routing transaction could never commit.
 * Ingest's own limits keep bodies near 32 KB; only a record written to the ingest topic
 * directly comes near this.
 */
export const MAX_BODY_BYTES = 900_000;

/** The part of the live configuration routing reads (ConfigView provides it). */
export interface ConfigLookup {
  source(id: string): Source | undefined;
  destinationsForSource(sourceId: string): readonly Destination[];
}

export interface ChunkOutcome {
  deliveries: Delivery[];
  /** Deliveries made, by destination id. */
  routed: Map<string, number>;
  filtered: Map<FilterReason, number>;
  /**
   * Sources with a message filtered for config (no such source, no destinations, a disabled
   * source or destination — not a message's own integrations object), each with the newest
   * `receivedAt` of such a message: what the config view must be as recent as (pipeline.ts).
   */
  configFiltered: Map<string, number>;
  duplicates: number;
  invalid: Array<{ offset: string; raw: RawRecord; error: InvalidMessage }>;
}

/**
 * What routing a record writes, estimated before it is routed: its bytes once per enabled
 * destination of its source (each delivery carries the rendered body, about the record's size). Routing
 * transactions are bounded by it (ROUTER_MAX_BATCH_BYTES) as well as by records: a fetch's worth
 * of 30 KB records (1 MB a partition) to a source with ten destinations made transactions of up
 * to 60 MB, and the main lane's records (and every read_committed reader of the partitions they
 * wrote) waited seconds for them.
 */
export function routingWeight(record: DecodedRecord, config: ConfigLookup): number {
  const bytes = record.raw.value?.length ?? 0;
  if ('invalid' in record || record.diverted) return bytes;
  return bytes * Math.max(1, enabledDestinations(config.destinationsForSource(record.message.sourceId)));
}

const increment = <K>(counts: Map<K, number>, key: K): void => void counts.set(key, (counts.get(key) ?? 0) + 1);

export function routeChunk(records: readonly DecodedRecord[], config: ConfigLookup, claims: DedupClaims): ChunkOutcome {
  const outcome: ChunkOutcome = { deliveries: [], routed: new Map(), filtered: new Map(), configFiltered: new Map(), duplicates: 0, invalid: [] };
  for (const record of records) {
    if ('invalid' in record) {
      outcome.invalid.push({ offset: record.offset, raw: record.raw, error: record.invalid });
      continue;
    }
    try {
      routeMessage(record.message, config, claims, outcome);
    } catch (error) {
      // Routing one record is a pure function of the record and the config: whatever fails
      // for it fails again on every retry, so it is invalid rather than a reason to stop.
      // (Nothing of it was added to the outcome: deliveries are pushed last.)
      const invalid = error instanceof InvalidMessage ? error : new InvalidMessage('unrenderable', `routing failed: ${error instanceof Error ? error.message : String(error)}`);
      outcome.invalid.push({ offset: record.offset, raw: record.raw, error: invalid });
    }
  }
  return outcome;
}

function routeMessage(message: IngestMessage, config: ConfigLookup, claims: DedupClaims, outcome: ChunkOutcome): void {
  checkMessage(message);
  let parsed: FreeForm | undefined;
  const parts = (): FreeForm => (parsed ??= parseFreeForm(message));
  const decision = decideRoute(config.source(message.sourceId), config.destinationsForSource(message.sourceId), () =>
    webhooksEnabled(parts().integrations, contextIntegrations(parts().context)),
  );
  for (const { reason } of decision.filtered) {
    increment(outcome.filtered, reason);
    if (reason !== 'integrations_off') outcome.configFiltered.set(message.sourceId, Math.max(message.receivedAt, outcome.configFiltered.get(message.sourceId) ?? Number.NEGATIVE_INFINITY));
  }
  if (decision.destinations.length === 0) return;

  // Rendered before the id is claimed: a record that cannot be delivered must not mark its
  // messageId as forwarded (a corrected copy would then be dropped as a repeat).
  const body = renderBody(message, parts());
  if (body.length > MAX_BODY_BYTES) throw new InvalidMessage('too_large', `the rendered webhook body is ${body.length} bytes; the limit is ${MAX_BODY_BYTES}`);
  if (!claims.claim(dedupKey(message.sourceId, message.messageId))) {
    outcome.duplicates++;
    return;
  }
  for (const destination of decision.destinations) {
    outcome.deliveries.push({
      deliveryId: deliveryKey(destination.id, message.sourceId, message.messageId),
      destinationId: destination.id,
      sourceId: message.sourceId,
      messageId: message.messageId,
      messageType: message.type,
      userId: message.userId,
      anonymousId: message.anonymousId,
      body,
      receivedAt: message.receivedAt,
      routedAt: claims.now,
      attempts: 0,
      firstAttemptAt: null,
      lastError: null,
      lastStatus: null,
      replays: 0,
    });
    increment(outcome.routed, destination.id);
  }
}
