/**
 * Which records of the main ingest topic the router routes as it reads them, and which it
 * moves to the overflow lane first. Ingest gives every source a share of the main topic
 * (INGEST_SOURCE_RATE); a producer writing to the topic directly passes no such check, and a
 * backfill it writes — 100,000 records in six seconds — sat in every partition in front of
 * the other sources' records: routed first, it held their events for up to 8.8 s.
 *
 * Each source has ROUTER_SOURCE_RATE units a second of the main lane (units as ingest counts
 * them: `shareUnits`), measured in record time: a record is moved when what its source had
 * routed from the main lane in the second of record time before it, with the record itself,
 * passes the rate (a record alone in its second is never moved, whatever its size). A record's
 * time is its Kafka timestamp, so what a router reads late after a restart is judged by when
 * it was written, not by how fast it catches up (a producer that stamps its records with old
 * times itself is not held to the share) — but never later than the router's clock: a record
 * stamped ahead is judged as written now, so a producer cannot spread a burst over the future.
 *
 * Why counts per second of record time and not a token bucket on a clock: the bucket had one
 * clock per source, the newest timestamp of any partition, and one record stamped an hour ahead
 * (brokers take up to an hour by default), or one partition read 30 s behind another (its
 * previous owner died), moved that clock past every other record, which then refilled nothing:
 * traffic well within the share was moved to the overflow lane — reordering a user's events,
 * letting a delete overtake the events before it. Counted where each record was written, a
 * partition read late is judged against the same seconds as written, whatever the others do.
 *
 * A record past its source's share is copied — key and value — to `<ns>.ingest.overflow.v1` in
 * the transaction that commits the offset past it, and routed from there, after the main lane.
 * Copying a record costs a fraction of routing it, so the others' records behind a backfill are
 * reached that much sooner. The default is four times ingest's share: what ingest wrote is not
 * moved again unless several ingest replicas together send one source past it. A record whose
 * copy the broker would refuse is never moved (`MAX_DIVERTED_BYTES`).
 *
 * Pure apart from the counts; the pipeline (pipeline.ts) asks for each main-lane record, and
 * gives back what a chunk took when its transaction failed (the chunk is judged again).
 */
import { enabledDestinations, shareUnits } from '@tributary/shared';
import { MAX_BODY_BYTES, type ConfigLookup, type DecodedRecord } from './route-chunk.js';

/**
 * The largest copy (key and value) moved to the overflow lane: the limit the router holds its
 * rendered bodies to, for the same reason — the router writes uncompressed, under the broker's
 * 1 MB record limit. A direct producer's GZIP batch can hold a record of 3 MB that the broker
 * took at 300 KB; copied as read, it was refused (MESSAGE_TOO_LARGE, not retriable), the
 * transaction aborted with every other partition's chunk, and the record was moved again at
 * every retry: the lane never got past it. Routed where it is, it is quarantined `too_large`
 * (or routed, should its rendered body be smaller) like any record.
 */
export const MAX_DIVERTED_BYTES = MAX_BODY_BYTES;

/** Record time is counted in slots this long; a record is judged against the slots of the second up to it. */
const SLOT_MS = 100;
const WINDOW_SLOTS = 1_000 / SLOT_MS;
/**
 * Slots kept per source, the oldest made forgotten first: two minutes of record time, enough
 * for every partition's current second (each a region of record time of its own while one is
 * behind). Forgetting only ever lets records through.
 */
const MAX_SLOTS_PER_SOURCE = 1_200;

/** What a record routed from the main lane took of its source's share (given back if its transaction fails). */
export interface ShareCharge {
  sourceId: string;
  slot: number;
  units: number;
}

export class MainLaneShare {
  /** Per source: units routed from the main lane, by slot of record time. */
  private readonly sources = new Map<string, Map<number, number>>();

  /** `ratePerSecond` 0: nothing is moved. */
  constructor(
    private readonly ratePerSecond: number,
    private readonly config: ConfigLookup,
  ) {}

  /** Sources holding a share (one each that was judged). */
  get sourcesHeld(): number {
    return this.sources.size;
  }

  /**
   * Whether `record` goes to the overflow lane instead of being routed now. Records that are
   * not valid messages are routed (to the quarantine) where they are; a record without a
   * usable timestamp, or stamped later than `now`, is judged at `now`. A record routed here
   * takes its units from the share and carries them (`record.charged`) until its transaction
   * is known; one moved takes nothing.
   */
  diverts(record: DecodedRecord, now: number): boolean {
    if (this.ratePerSecond <= 0 || !('message' in record)) return false;
    const { sourceId } = record.message;
    // A share is kept per source, so only configured sources get one: a record of a source
    // nobody configured is routed to nothing where it is, and a producer writing records with
    // ever new sourceIds must not grow this map (or the diverted metric's labels) without end.
    if (this.config.source(sourceId) === undefined) return false;
    const bytes = record.raw.value?.length ?? 0;
    if (bytes + (record.raw.key?.length ?? 0) > MAX_DIVERTED_BYTES) return false;
    const stamped = Number(record.raw.timestamp);
    const at = Number.isFinite(stamped) && stamped > 0 ? Math.min(stamped, now) : now;
    const slot = Math.floor(at / SLOT_MS);
    const units = shareUnits(1, bytes, enabledDestinations(this.config.destinationsForSource(sourceId)));
    let slots = this.sources.get(sourceId);
    if (!slots) this.sources.set(sourceId, (slots = new Map()));
    let used = 0;
    for (let back = 0; back < WINDOW_SLOTS; back++) used += slots.get(slot - back) ?? 0;
    if (used > 0 && used + units > this.ratePerSecond) return true;
    slots.set(slot, (slots.get(slot) ?? 0) + units);
    if (slots.size > MAX_SLOTS_PER_SOURCE) slots.delete(slots.keys().next().value!);
    record.charged = { sourceId, slot, units };
    return false;
  }

  /**
   * Gives back what `records` took (`diverts`), when their transaction did not commit: they are
   * read and judged again, and must not find their own units already spent.
   */
  giveBack(records: readonly DecodedRecord[]): void {
    for (const record of records) {
      if (!('message' in record) || record.charged === undefined) continue;
      const { sourceId, slot, units } = record.charged;
      record.charged = undefined;
      const slots = this.sources.get(sourceId);
      const held = slots?.get(slot);
      if (slots && held !== undefined) slots.set(slot, Math.max(0, held - units));
    }
  }
}
