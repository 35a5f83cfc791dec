/**
 * Which ingest topic a request's messages are written to. Every source has a share of the
 * main ingest topic, INGEST_SOURCE_RATE messages a second (a token bucket holding at most
 * one second of it); a request its bucket covers goes to the main topic, one it does not goes
 * whole to the overflow lane (`<ns>.ingest.overflow.v1`). The router reads both, the main
 * lane first, so a source that sends far more than the others — a backfill, a burst, a loop
 * in someone's code — queues behind itself when the router falls behind, not in front of
 * every other source. Nothing is refused or slowed here: while the router keeps up, both
 * lanes are routed as they arrive.
 *
 * Pure apart from the clock the caller passes. One bucket per source that sent something:
 * sources are configuration entities, so the map stays as small as the source list.
 */

export type IngestLane = 'main' | 'overflow';

interface Bucket {
  tokens: number;
  refilledAt: number;
}

export class SourceLanes {
  private readonly buckets = new Map<string, Bucket>();

  /** `ratePerSecond` 0 sends everything to the main lane. */
  constructor(private readonly ratePerSecond: number) {}

  laneFor(sourceId: string, messages: number, now: number): IngestLane {
    const rate = this.ratePerSecond;
    if (rate <= 0) return 'main';
    let bucket = this.buckets.get(sourceId);
    if (!bucket) this.buckets.set(sourceId, (bucket = { tokens: rate, refilledAt: now }));
    else {
      bucket.tokens = Math.min(rate, bucket.tokens + (Math.max(0, now - bucket.refilledAt) / 1000) * rate);
      bucket.refilledAt = now;
    }
    // A request goes whole to one lane (it is one transaction's worth, and a client's batch
    // keeps its order); one the bucket cannot cover takes nothing from it.
    if (messages > bucket.tokens) return 'overflow';
    bucket.tokens -= messages;
    return 'main';
  }

  /**
   * Returns the share a main-lane request took when it was not accepted after all (Kafka did
   * not acknowledge it, the client got a 503): its retry should not find the share spent.
   */
  giveBack(sourceId: string, messages: number): void {
    const bucket = this.buckets.get(sourceId);
    if (bucket) bucket.tokens = Math.min(this.ratePerSecond, bucket.tokens + messages);
  }
}
