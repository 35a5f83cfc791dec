/**
 * What one router transaction writes when it carries chunks of several partitions: every
 * chunk routed with one shared set of dedup claims, and one consumed offset per partition.
 *
 * The claims are shared so that a messageId repeated on two partitions whose chunks share
 * a transaction is forwarded once, exactly as a repeat inside one chunk is: the claims are
 * taken when the transaction is assembled, after the previous transaction's outcome is
 * known, so the dedup state they read holds everything committed before.
 */
import type { Delivery } from '@tributary/schemas';
import type { DedupClaims } from './dedup.js';
import { routeChunk, type ChunkOutcome, type ConfigLookup, type DecodedRecord, type RawRecord } from './route-chunk.js';

/** Decoded ingest records of one partition, routed and committed together. */
export interface PartitionChunk {
  topic: string;
  partition: number;
  records: readonly DecodedRecord[];
  /** Of `records`, those to route here: the others are moved to the overflow lane (`diverted`). */
  routed: number;
  /** What routing the records writes, estimated (`routingWeight`): bounds a transaction's bytes. */
  bytes: number;
  /** The offset to commit for the partition once the chunk is routed. */
  nextOffset: string;
  /** An overflow-lane chunk read while that lane is behind: it yields to the main lane (GroupCommit). */
  behind?: boolean;
  /** Date.now() once the chunk's records were read from Kafka (`configFilteredSources`). */
  readAt: number;
}

export interface TopicOffsets {
  topic: string;
  partitions: Array<{ partition: number; offset: string }>;
}

export interface TransactionPlan {
  /** One per chunk, in the chunks' order. */
  outcomes: ChunkOutcome[];
  deliveries: Delivery[];
  /** Records moved to the overflow lane unrouted (`diverted`), as read, with their sources. */
  diverted: Array<{ raw: RawRecord; sourceId: string }>;
  /** For `sendOffsets`: each partition once, at the highest next offset of its chunks. */
  offsets: TopicOffsets[];
}

export function planTransaction(chunks: readonly PartitionChunk[], config: ConfigLookup, claims: DedupClaims): TransactionPlan {
  const diverted: TransactionPlan['diverted'] = [];
  const outcomes = chunks.map((chunk) => {
    const routed: DecodedRecord[] = [];
    for (const record of chunk.records) {
      if ('message' in record && record.diverted) diverted.push({ raw: record.raw, sourceId: record.message.sourceId });
      else routed.push(record);
    }
    return routeChunk(routed, config, claims);
  });
  return { outcomes, deliveries: outcomes.flatMap((outcome) => outcome.deliveries), diverted, offsets: consumedOffsets(chunks) };
}

/**
 * The sources of the plan with a message filtered for config (no such source, no destinations,
 * a disabled source or destination), each with how recent the config view must be for that
 * filtering to stand: as of the newest such message's receipt. The router follows the config
 * topic on its own, so a source or destination created (or enabled) through the admin API and
 * used at once could otherwise meet a view a step behind and be filtered — the message lost,
 * while the indexer, which waits, showed it routed. A message counts from its `receivedAt`
 * (ingest's clock: a backlog received long ago is covered by the view as it stands), but from
 * no later than when this router read it: a check begun after that covers it whatever the
 * clocks say. Diverted records are not routed here and do not count.
 */
export function configFilteredSources(plan: Pick<TransactionPlan, 'outcomes'>, chunks: readonly Pick<PartitionChunk, 'readAt'>[]): Map<string, number> {
  const sources = new Map<string, number>();
  plan.outcomes.forEach(({ configFiltered }, index) => {
    const readAt = chunks[index]!.readAt;
    for (const [sourceId, receivedAt] of configFiltered) {
      const needed = Number.isFinite(receivedAt) ? Math.min(receivedAt, readAt) : readAt;
      sources.set(sourceId, Math.max(needed, sources.get(sourceId) ?? Number.NEGATIVE_INFINITY));
    }
  });
  return sources;
}

export function consumedOffsets(chunks: readonly PartitionChunk[]): TopicOffsets[] {
  const byTopic = new Map<string, Map<number, string>>();
  for (const { topic, partition, nextOffset } of chunks) {
    let partitions = byTopic.get(topic);
    if (!partitions) byTopic.set(topic, (partitions = new Map()));
    const known = partitions.get(partition);
    if (known === undefined || BigInt(nextOffset) > BigInt(known)) partitions.set(partition, nextOffset);
  }
  return [...byTopic].map(([topic, partitions]) => ({ topic, partitions: [...partitions].map(([partition, offset]) => ({ partition, offset })) }));
}

/** Ingest records the chunks hold, for the transaction size cap and metric. */
export function recordCount(chunks: readonly PartitionChunk[]): number {
  let records = 0;
  for (const chunk of chunks) records += chunk.records.length;
  return records;
}
