/**
 * Which records of the main ingest topic the router routes as it reads them, and which it
 * moves to the overflow lane first. Ingest gives every source a share of the main topic
 * (INGEST_SOURCE_RATE); a producer writing to the topic directly passes no such check, and a
 * backfill it writes — 100,000 records in six seconds — sat in every partition in front of
 * the other sources' records: routed first, it held their events for up to 8.8 s.
 *
 * Each source has ROUTER_SOURCE_RATE units a second of the main lane (shared `SourceLanes`,
 * units as ingest counts them: `shareUnits`), measured by the records' Kafka timestamps, so
 * the records a router reads after a restart are judged by when they were written, not by how
 * fast it catches up (a producer that stamps its records with old times itself is not held to
 * the share). A record past its source's share is copied — key and value — to
 * `<ns>.ingest.overflow.v1` in the transaction that commits the offset past it, and routed
 * from there, after the main lane. Copying a record costs a fraction of routing
 * it, so the others' records behind a backfill are reached that much sooner. The default is
 * four times ingest's share: what ingest wrote is not moved again unless several ingest
 * replicas together send one source past it.
 *
 * Pure apart from the share's state; the pipeline (pipeline.ts) asks for each main-lane record.
 */
import { enabledDestinations, shareUnits, SourceLanes } from '@tributary/shared';
import type { ConfigLookup, DecodedRecord } from './route-chunk.js';

export class MainLaneShare {
  private readonly lanes: SourceLanes;

  /** `ratePerSecond` 0: nothing is moved. */
  constructor(
    private readonly ratePerSecond: number,
    private readonly config: ConfigLookup,
  ) {
    this.lanes = new SourceLanes(ratePerSecond);
  }

  /** Sources holding a share (one each that was judged). */
  get sourcesHeld(): number {
    return this.lanes.size;
  }

  /**
   * Whether `record` goes to the overflow lane instead of being routed now. Records that are
   * not valid messages are routed (to the quarantine) where they are; a record without a
   * usable timestamp is judged by `now`.
   */
  diverts(record: DecodedRecord, now: number): boolean {
    if (this.ratePerSecond <= 0 || !('message' in record)) return false;
    const { sourceId } = record.message;
    // A share is kept per source, so only configured sources get one: a record of a source
    // nobody configured is routed to nothing where it is, and a producer writing records with
    // ever new sourceIds must not grow this map (or the diverted metric's labels) without end.
    if (this.config.source(sourceId) === undefined) return false;
    const stamped = Number(record.raw.timestamp);
    const at = Number.isFinite(stamped) && stamped > 0 ? stamped : now;
    const units = shareUnits(1, record.raw.value?.length ?? 0, enabledDestinations(this.config.destinationsForSource(sourceId)));
    return this.lanes.laneFor(sourceId, units, at) === 'overflow';
  }
}
