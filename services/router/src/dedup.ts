/**
 * The router's memory of forwarded message ids: a messageId repeated by the same source
 * within the window (`DEDUP_WINDOW`) is forwarded once.
 *
 * The durable copy is the dedup topic, written in the same transaction as the deliveries
 * (see dedup-store.ts): one record per routing transaction listing the ids it forwarded.
 * This is the in-memory view of it. Entries are keyed `<sourceId>/<messageId>` and hold
 * when the id was first forwarded, by the router's clock.
 * Memory is bounded by `DEDUP_MAX_ENTRIES` and `DEDUP_MAX_BYTES` (an entry's estimated
 * footprint: its key's characters and the map's overhead — long ids cost more): past either,
 * the oldest entries are forgotten first, so under that much traffic the effective window is
 * shorter than configured (`tributary_router_dedup_capacity_evictions_total` counts it).
 * The bound holds while the state is reloaded from the dedup topic too.
 *
 * Claims made while routing a chunk are held in a `DedupClaims` overlay and reach the
 * state only when the chunk's transaction committed, so an aborted transaction forgets
 * them; a repeat inside the same chunk is caught by the overlay.
 */

import type { DedupBatch } from '@tributary/schemas';
import { ArrivalQueue } from './arrival-queue.js';

/**
 * Ids per dedup record are bounded by bytes, well under the broker's 1 MiB record limit; a
 * routing transaction (ROUTER_MAX_BATCH ids of at most a few hundred bytes) fits in one.
 */
export const DEDUP_RECORD_MAX_BYTES = 512 * 1024;

export interface DedupOptions {
  windowMs: number;
  maxEntries: number;
  maxBytes: number;
  /** Called for each entry forgotten before its window ended because the state was full. */
  onCapacityEviction?: () => void;
}

export function dedupKey(sourceId: string, messageId: string): string {
  return `${sourceId}/${messageId}`;
}

/** Estimated bytes of one entry beside its key: the Map slot, the number, the string header, its place in the arrival queue. */
export const ENTRY_OVERHEAD_BYTES = 96;

/** Estimated bytes an entry holds: V8 strings take one or two bytes a character; two is the bound. */
export function entryBytes(key: string): number {
  return ENTRY_OVERHEAD_BYTES + 2 * key.length;
}

export class DedupState {
  private readonly firstSeen = new Map<string, number>();
  /**
   * The order entries were remembered in — (nearly) first-seen order, so the oldest come
   * first. A key remembered again with a newer time is queued again; its older place is
   * stale (the map holds another time for it) and skipped when it reaches the front, which
   * it does before the newer one.
   */
  private readonly arrivals = new ArrivalQueue();
  private bytesHeld = 0;

  constructor(readonly options: DedupOptions) {}

  get size(): number {
    return this.firstSeen.size;
  }

  /** Estimated bytes the entries hold. */
  get bytes(): number {
    return this.bytesHeld;
  }

  isDuplicate(key: string, now: number): boolean {
    const firstSeenAt = this.firstSeen.get(key);
    return firstSeenAt !== undefined && now - firstSeenAt < this.options.windowMs;
  }

  /**
   * Records that `key` was forwarded at `firstSeenAt`. Idempotent, and an older record of
   * the same key never replaces a newer one, so the topic's copy may be applied again
   * after this process committed the same entry itself.
   */
  remember(key: string, firstSeenAt: number, now: number): void {
    if (now - firstSeenAt >= this.options.windowMs) return;
    const existing = this.firstSeen.get(key);
    if (existing !== undefined) {
      if (existing >= firstSeenAt) return;
      this.forget(key);
    }
    this.firstSeen.set(key, firstSeenAt);
    this.arrivals.push(key, firstSeenAt);
    this.bytesHeld += entryBytes(key);
    while (this.firstSeen.size > this.options.maxEntries || this.bytesHeld > this.options.maxBytes) {
      if (!this.forgetOldest()) break;
      this.options.onCapacityEviction?.();
    }
  }

  /**
   * Drops entries that have left the window, from the oldest on; stops at the first one
   * still inside it (a straggler further on is ignored by `isDuplicate` until then).
   */
  evictExpired(now: number): number {
    let evicted = 0;
    for (;;) {
      this.dropStale();
      if (this.arrivals.size === 0 || now - this.arrivals.frontAt() < this.options.windowMs) return evicted;
      this.forgetOldest();
      evicted++;
    }
  }

  /** Forgets the oldest entry; false when there is none. */
  private forgetOldest(): boolean {
    this.dropStale();
    const key = this.arrivals.frontKey();
    if (key === undefined) return false;
    this.arrivals.dropFront();
    this.forget(key);
    return true;
  }

  /** Drops queued places whose key was remembered again since (or forgotten). */
  private dropStale(): void {
    for (let key = this.arrivals.frontKey(); key !== undefined && this.firstSeen.get(key) !== this.arrivals.frontAt(); key = this.arrivals.frontKey()) {
      this.arrivals.dropFront();
    }
  }

  private forget(key: string): void {
    if (this.firstSeen.delete(key)) this.bytesHeld -= entryBytes(key);
  }

  claims(now: number): DedupClaims {
    return new DedupClaims(this, now);
  }
}

export class DedupClaims {
  private readonly pending = new Map<string, number>();

  constructor(
    private readonly state: DedupState,
    readonly now: number,
  ) {}

  /** True the first time a key is seen within the window (the message may be forwarded). */
  claim(key: string): boolean {
    if (this.pending.has(key) || this.state.isDuplicate(key, this.now)) return false;
    this.pending.set(key, this.now);
    return true;
  }

  /**
   * The claimed ids as dedup records: one for the whole transaction, split only when they
   * would not fit in `maxBytes` (UTF-8 bytes estimated from above: 3 per UTF-16 unit).
   */
  records(maxBytes = DEDUP_RECORD_MAX_BYTES): DedupBatch[] {
    const records: DedupBatch[] = [];
    let keys: string[] = [];
    let bytes = 0;
    for (const key of this.pending.keys()) {
      const size = 3 * key.length + 5;
      if (keys.length > 0 && bytes + size > maxBytes) {
        records.push({ firstSeenAt: this.now, keys });
        keys = [];
        bytes = 0;
      }
      keys.push(key);
      bytes += size;
    }
    if (keys.length > 0) records.push({ firstSeenAt: this.now, keys });
    return records;
  }

  /** After the transaction committed. */
  commit(): void {
    for (const [key, firstSeenAt] of this.pending) this.state.remember(key, firstSeenAt, this.now);
  }
}
