/**
 * Which ingest topic a request's messages are written to. Every source has a share of the
 * main ingest topic, INGEST_SOURCE_RATE units a second (a token bucket holding at most one
 * second of it); a request its bucket covers goes to the main topic, one it does not goes
 * whole to the overflow lane (`<ns>.ingest.overflow.v1`). A full bucket covers a request of
 * any size, and a larger one leaves the source in debt for as long as its size takes. The
 * router reads both, the main lane first, and sends the overflow lane's deliveries through the
 * dispatchers' retry lane, so a source that sends far more than the others — a backfill, a
 * burst, a loop in someone's code — queues behind itself when the pipeline falls behind, not
 * in front of every other source. Nothing is refused or slowed here: while the pipeline keeps
 * up, both lanes are routed and delivered as they arrive.
 *
 * A unit is one delivery of a message of up to 4 KiB (`shareUnits`): what a source costs
 * downstream is its deliveries and their bytes, not its message count. Counted in messages,
 * a source sending 30 KB messages to ten destinations stayed under its share at 125 messages
 * a second while it made 37 MB/s of deliveries, and another source's events waited 20–30 s
 * behind them at the router and the dispatchers.
 *
 * The router keeps a share of its own for what arrives in the main topic without passing
 * ingest — records a producer writes there directly (ROUTER_SOURCE_RATE, router's
 * main-lane-share.ts). It does not use these buckets: it judges records by their timestamps,
 * which arrive out of order (partitions read at different lags, producers' clocks), and a
 * bucket has one clock per source — the newest time it was shown, which one record stamped
 * ahead or one partition read ahead of another moves past everyone else's records. It counts
 * units per second of record time instead (`shareUnits` is common to both).
 *
 * Pure apart from the clock the caller passes — ingest's wall clock, which may step back (NTP):
 * time spent is counted once. One bucket per source that sent something: sources are
 * configuration entities, so the map stays as small as the source list.
 */

export type IngestLane = 'main' | 'overflow';

/** Bytes of request body that count as one message's worth of a source's share. */
export const BYTES_PER_UNIT = 4_096;

/**
 * What a request takes of its source's share: its messages — or its body's bytes in 4 KiB
 * units, when that is more — once for every destination its messages will be delivered to
 * (the source's enabled destinations; at least once, so a source with none still has a share).
 * A typical batch of 1–2 KB events to one destination counts its messages, as before.
 */
export function shareUnits(messages: number, bytes: number, destinations: number): number {
  return Math.max(messages, Math.ceil(bytes / BYTES_PER_UNIT)) * Math.max(1, destinations);
}

interface Bucket {
  tokens: number;
  refilledAt: number;
}

export class SourceLanes {
  private readonly buckets = new Map<string, Bucket>();

  /** `ratePerSecond` 0 sends everything to the main lane. */
  constructor(private readonly ratePerSecond: number) {}

  /** Sources holding a bucket. */
  get size(): number {
    return this.buckets.size;
  }

  /** The lane of a request that takes `units` of the source's share (`shareUnits`). */
  laneFor(sourceId: string, units: number, now: number): IngestLane {
    const rate = this.ratePerSecond;
    if (rate <= 0) return 'main';
    let bucket = this.buckets.get(sourceId);
    if (!bucket) this.buckets.set(sourceId, (bucket = { tokens: rate, refilledAt: now }));
    else {
      bucket.tokens = Math.min(rate, bucket.tokens + (Math.max(0, now - bucket.refilledAt) / 1000) * rate);
      bucket.refilledAt = Math.max(bucket.refilledAt, now);
    }
    // A request goes whole to one lane (it is one transaction's worth, and a client's batch
    // keeps its order); one the bucket cannot cover takes nothing from it. A full bucket covers
    // any request — one larger than a second's share puts it in debt, paid back before the
    // source's next main-lane request — or a request of more units than a second's share (250
    // messages of the Go library to three destinations) could never be covered, however
    // rarely the source sent one.
    if (units > bucket.tokens && bucket.tokens < rate) return 'overflow';
    bucket.tokens -= units;
    return 'main';
  }

  /**
   * Returns the share a main-lane request took when it was not accepted after all (Kafka did
   * not acknowledge it, the client got a 503): its retry should not find the share spent.
   */
  giveBack(sourceId: string, units: number): void {
    const bucket = this.buckets.get(sourceId);
    if (bucket) bucket.tokens = Math.min(this.ratePerSecond, bucket.tokens + units);
  }
}
